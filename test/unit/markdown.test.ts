import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeMarkdown } from '../../common/markdown';
import { maskCpf } from '../../common/mask';
import { shownMarkdown as shown } from '../helpers/markdown';

describe('escapeMarkdown', () => {
  it('shows a masked CPF as it is, where it was bold before', () => {
    const cpf = maskCpf('63401825771');
    expect(cpf).toBe('***.018.257-**');
    expect(shown(`payer ${cpf}`).tags).not.toEqual(['p']);
    expect(escapeMarkdown(`payer ${cpf}`)).toBe('payer \\*\\*\\*.018.257-\\*\\*');
    expect(shown(escapeMarkdown(`payer ${cpf}`))).toEqual({ tags: ['p'], text: `payer ${cpf}` });
  });

  it('shows reason codes, links, tables, headings, lists and placeholders as text', () => {
    for (const text of [
      'refused — payee_not_owner',
      '[click](https://example.com)',
      '| a | b |',
      '# heading',
      '- item',
      '+ item',
      '1. first',
      '2) second',
      '> quote',
      '~~gone~~',
      '`code`',
      '<b>html</b> &amp;',
      'user-{workflowId}',
      '---',
      'back\\slash\\',
    ]) {
      const escaped = escapeMarkdown(text);
      expect(shown(escaped), text).toEqual({ tags: ['p'], text });
      expect(escaped, text).not.toContain('{workflowId}');
    }
  });

  it('leaves plain text alone', () => {
    for (const text of ['Deposit R$ 150,00 — txid 17329999…', 'Onboarding deadline', 'tour-1732-123.5'])
      expect(escapeMarkdown(text)).toBe(text);
  });

  it('any line of text renders as that text, in one paragraph', () => {
    const char = fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}~çã—…'.split(''));
    fc.assert(
      fc.property(fc.array(char, { minLength: 1, maxLength: 40 }), (chars) => {
        const text = chars.join('');
        // Indented by four spaces it is a code block, which pixflow's summaries never are.
        fc.pre(text.trim() !== '' && !/^\s/.test(text));
        const { tags, text: seen } = shown(escapeMarkdown(text));
        expect(tags).toEqual(['p']);
        expect(seen).toBe(text.trim());
      }),
      { numRuns: 500 },
    );
  });
});
