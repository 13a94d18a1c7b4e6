import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { THIRD_PARTY_PAYER } from '../../contracts/deposit';
import { CLOSED, DEPOSIT_LIMIT_EXCEEDED, IMPEDED, withdrawalRefusals } from '../../contracts/rules';
import { policyFields } from '../../policy/diff';
import { defaultPolicy } from '../../policy/seed';

// docs/rules.md's table against the rules' own definitions: every refusal code and every rule's
// policy field is in it, each with the default the policy's first version has.

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

/** The policy's fields a money rule reads: the deposits' and withdrawals', four eyes, the authorization, eligibility's. */
const RULE_FIELD =
  /^(deposits|withdrawals)\.|^payouts\.(approvalAboveCentavos|approvers|authorizationOnNoAnswer)$|^eligibility\.(failClosed|freshMs|impededCloseWithinMs)$/;
const ruleFields = policyFields(defaultPolicy()).filter(([path]) => RULE_FIELD.test(path));

describe('docs/rules.md', () => {
  it('has one row of four cells per rule', () => {
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row, row.join(' | ')).toHaveLength(4);
      // Each rule names the policy field it is, or says it has none.
      expect(row[2], row.join(' | ')).toMatch(/`[a-z]+\.[A-Za-z.]+`|^none/);
    }
  });

  it('names every refusal code a rule can give', () => {
    const reasons = rows.map((r) => r[1]).join(' ');
    for (const code of [...withdrawalRefusals, THIRD_PARTY_PAYER, DEPOSIT_LIMIT_EXCEEDED, IMPEDED, CLOSED])
      expect(reasons, code).toContain(`\`${code}\``);
  });

  it("names every rule's policy field with the default the policy's first version has", () => {
    const settings = rows.map((r) => r[2]).join(' ');
    for (const [path, value] of ruleFields) {
      const given = new RegExp(`\`${path.replace('.', '\\.')}\` \\(([^,;)]+)`).exec(settings)?.[1];
      expect(given, `${path} is not in the table's policy fields`).toBeDefined();
      expect(given, path).toBe(String(value));
    }
  });

  it("names no environment variable as a rule's setting: the rules are the policy", () => {
    const settings = rows.map((r) => r[2]).join(' ');
    const variables = [...settings.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);
    expect(variables).toEqual(['PAYOUT_AUTHORIZATION_URL', 'ELIGIBILITY_URL']);
  });
});
