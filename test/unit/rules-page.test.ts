import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../common/config';
import { shownDefault } from '../../common/config-reference';
import { THIRD_PARTY_PAYER } from '../../contracts/deposit';
import {
  CLOSED,
  DEPOSIT_LIMIT_EXCEEDED,
  IMPEDED,
  moneyRulesOf,
  withdrawalRefusals,
} from '../../contracts/rules';

// docs/rules.md's table against the rules' own definitions: every refusal code and every rule's
// setting is in it, each setting with the default the configuration has.

const page = readFileSync(path.resolve(__dirname, '../../docs/rules.md'), 'utf8');
const rows = page
  .split('\n')
  .filter((l) => l.startsWith('| ') && !l.startsWith('| rule |') && !l.startsWith('|---'))
  .map((l) =>
    l
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim()),
  );

/** The settings moneyRulesOf reads: each rule is one of them. */
function settingsOfTheRules(): Array<keyof typeof envSchema.shape> {
  const read: Array<keyof typeof envSchema.shape> = [];
  const config = new Proxy(
    {},
    {
      get: (_target, name) => {
        read.push(String(name) as keyof typeof envSchema.shape);
        return 0;
      },
    },
  );
  moneyRulesOf(config as Parameters<typeof moneyRulesOf>[0]);
  return read;
}
const ruleSettings = settingsOfTheRules();

describe('docs/rules.md', () => {
  it('has one row of four cells per rule', () => {
    expect(rows.length).toBeGreaterThanOrEqual(ruleSettings.length - 1);
    for (const row of rows) expect(row, row.join(' | ')).toHaveLength(4);
  });

  it('names every refusal code a rule can give', () => {
    const reasons = rows.map((r) => r[1]).join(' ');
    for (const code of [...withdrawalRefusals, THIRD_PARTY_PAYER, DEPOSIT_LIMIT_EXCEEDED, IMPEDED, CLOSED])
      expect(reasons, code).toContain(`\`${code}\``);
  });

  it('names every rule setting with the default the configuration has', () => {
    const settings = rows.map((r) => r[2]).join(' ');
    for (const name of ruleSettings) {
      const given = new RegExp(`\`${name}\` \\(([^,;)]+)`).exec(settings)?.[1];
      expect(given, `${name} is not in the table's settings`).toBeDefined();
      expect(given, name).toBe(shownDefault(name).split(/[ ,]/)[0]);
    }
  });

  it("gives each setting's number as the configuration's default, the payout controls' included", () => {
    const named = [
      ...rows
        .map((r) => r[2])
        .join(' ')
        .matchAll(/`([A-Z][A-Z0-9_]+)` \((\d+)[,;)]/g),
    ];
    expect(named.map((m) => m[1])).toContain('PAYOUT_APPROVAL_ABOVE_CENTAVOS');
    for (const [, name, given] of named)
      if (name && name in envSchema.shape)
        expect(given, name).toBe(shownDefault(name as keyof typeof envSchema.shape).split(/[ ,]/)[0]);
  });
});
