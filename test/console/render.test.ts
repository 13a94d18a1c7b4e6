import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../common/html';
import { formatBrl } from '../../common/money';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { clientFor } from '../helpers/sandbox-client';

// The console's pure parts, headers and escaping, without a browser.

describe('formatBrl', () => {
  it('formats centavos as BRL with integer arithmetic', () => {
    expect(formatBrl(15_000)).toBe('R$ 150,00');
    expect(formatBrl(0)).toBe('R$ 0,00');
    expect(formatBrl(5)).toBe('R$ 0,05');
    expect(formatBrl(100_000)).toBe('R$ 1.000,00');
    expect(formatBrl(123_456_789)).toBe('R$ 1.234.567,89');
    expect(formatBrl(Number.MAX_SAFE_INTEGER)).toBe('R$ 90.071.992.547.409,91');
    expect(() => formatBrl(1.5)).toThrow(RangeError);
  });

  it('round-trips every amount (no float drift)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (c) => {
        const digits = formatBrl(c).replace(/^R\$ /, '').replace(/[.,]/g, '');
        expect(BigInt(digits)).toBe(BigInt(c));
      }),
    );
  });
});

describe('escapeHtml', () => {
  it('leaves no markup or attribute breakout', () => {
    expect(escapeHtml(`<img src=x onerror="a('b')">&\``)).toBe(
      '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;&#96;',
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(escapeHtml(s)).not.toMatch(/[<>"'`]/);
      }),
    );
  });
});

describe('GET /sandbox/console', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => sandbox.close());

  it('serves HTML whose only script is its own (CSP nonce) and the rows alone for refresh', async () => {
    const res = await fetch(`${sandbox.url}/sandbox/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from elsewhere

    const rows = await fetch(`${sandbox.url}/sandbox/console/rows`);
    expect(rows.status).toBe(200);
    expect(await rows.text()).toContain('data-testid="deposits"');
  });

  it('shows what callers sent as text on the page and in its rows: no markup, no attribute breakout', async () => {
    const client = clientFor(sandbox.url);
    const evil = `<img src=x onerror="a('b')">&\``;
    const person = { externalId: 'ext-evil', cpf: '63401825771', email: 'ana@example.com', name: evil };
    const txid = `${Date.now()}1`;
    await client.createDeposit({ txid, amountCentavos: 100, client: person });
    const id = `wd"><script>alert(1)</script>\``;
    await client.createWithdrawal({
      transactionId: id,
      amountCentavos: 250,
      pixKey: 'ana@example.com',
      pixType: 'EMAIL',
      client: person,
    });
    for (const path of ['/sandbox/console', '/sandbox/console/rows']) {
      const html = await (await fetch(`${sandbox.url}${path}`)).text();
      // Every place a value stands: element text, and the quoted attributes of rows and buttons.
      expect(html).toContain(`<div>${escapeHtml(evil)}</div>`);
      expect(html).toContain(`data-testid="settle-${escapeHtml(id)}"`);
      expect(html).toContain(`data-id="${escapeHtml(id)}"`);
      expect(html).toContain('&#96;'); // the backtick, which Eta's own escaping leaves as it is
      expect(html).not.toContain('<img src=x');
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain('`');
    }
  });

  it('puts only a PNG data URL in an <img> and only an http(s) address in a link', async () => {
    const client = clientFor(sandbox.url);
    const txid = `${Date.now()}2`;
    await client.createDeposit({
      txid,
      amountCentavos: 100,
      client: { externalId: 'ext-img', cpf: '63401825771', email: 'ana@example.com', name: 'Ana' },
    });
    await client.startLiveness('39053344705', {
      correlationId: 'corr-link',
      plan: 'plan_basic',
      event: 'onboarding',
    });
    const rows = async () => (await fetch(`${sandbox.url}/sandbox/console/rows`)).text();
    const session = [...sandbox.state.liveness.values()].find((s) => s.document === '39053344705')!;
    expect(await rows()).toContain(`data-testid="qr-${txid}"`);
    expect(await rows()).toContain(`<a href="${escapeHtml(session.url)}"`);

    sandbox.state.deposits.get(txid)!.result.pixImage = 'data:image/svg+xml;base64,PHN2Zz4=';
    session.url = 'javascript:alert(1)';
    const html = await rows();
    expect(html).not.toContain(`data-testid="qr-${txid}"`);
    expect(html).not.toContain('svg+xml');
    expect(html).not.toContain('javascript:');
  });
});

describe('times on the console', () => {
  // 15:00 in UTC: 12:00 in São Paulo (UTC-3 all year since 2019).
  const NOW = Date.parse('2026-11-25T15:00:00.000Z');
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1', now: () => NOW });
  });
  afterAll(() => sandbox.close());

  /** The instant as the rows must show it: São Paulo's clock for people, UTC for machines. */
  const shown = (ms: number) => {
    const local = new Date(ms - 3 * 3_600_000).toISOString();
    const clock = `${local.slice(11, 19)} GMT-3`;
    const date = `${local.slice(8, 10)}/${local.slice(5, 7)}/${local.slice(0, 4)}`;
    return `<time datetime="${new Date(ms).toISOString()}" title="${date}, ${clock}">${clock}</time>`;
  };

  it("writes every time on São Paulo's clock with its offset, the UTC instant only in datetime", async () => {
    const client = clientFor(sandbox.url);
    const person = { externalId: 'ext-tz', cpf: '63401825771', email: 'ana@example.com', name: 'Ana' };
    const txid = `${NOW}3`;
    await client.createDeposit({ txid, amountCentavos: 100, client: person });
    await client.createWithdrawal({
      transactionId: 'wd-tz',
      amountCentavos: 250,
      pixKey: 'ana@example.com',
      pixType: 'EMAIL',
      client: person,
    });
    const rows = await (await fetch(`${sandbox.url}/sandbox/console/rows`)).text();
    expect(rows).toContain(shown(sandbox.state.deposits.get(txid)!.expiresAtMs));
    expect(rows).toContain(shown(NOW)); // the withdrawal's creation
    expect(rows).toContain('12:00:00 GMT-3');

    const page = await (await fetch(`${sandbox.url}/sandbox/console`)).text();
    // The refresh time the page writes in the browser follows the same rule.
    expect(page).toContain("var zone = 'America/Sao_Paulo';");
    for (const html of [rows, page]) expect(html).not.toMatch(/UTC/);
  });
});
