import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envSchema } from '../../common/config';
import { configReferenceTable } from '../../common/config-reference';
import { RULE_VARIABLE_FIELDS } from '../../policy/seed';
import { CONFIG_PAGE, configPageReference, withReference } from '../../scripts/write-config-reference';

// docs/configuration.md's reference is generated from the config schema: stale, this fails
// (`npm run docs:config` writes it again).

const page = readFileSync(CONFIG_PAGE, 'utf8');
const isCurrent = (table: string) => withReference(page, table) === page;

describe('the configuration reference', () => {
  it('is what the config schema says, every variable with its default and meaning', () => {
    expect(isCurrent(configPageReference()), 'run npm run docs:config').toBe(true);
    for (const name of Object.keys(envSchema.shape)) expect(page).toContain(`| \`${name}\` |`);
  });

  it("lists the rule variables apart, each with the policy field it seeds, and none of them among the process's settings", () => {
    for (const [name, field] of Object.entries(RULE_VARIABLE_FIELDS)) {
      expect(page).toContain(`| \`${name}\` |`);
      expect(page, name).toMatch(
        new RegExp(`\\| \`${name}\` \\| [^|]+ \\| \`${field.replace(/\./g, '\\.')}\` \\|`),
      );
    }
    expect(Object.keys(RULE_VARIABLE_FIELDS).filter((name) => name in envSchema.shape)).toEqual([]);
  });

  it('goes stale when a default changes', () => {
    const moved = envSchema.extend({ API_PORT: z.coerce.number().default(3999) });
    const table = configReferenceTable(moved);
    expect(table).toContain('| `API_PORT` | 3999 |');
    expect(isCurrent(configPageReference(table))).toBe(false);
  });

  it('shows durations and money as people read them, and no secret default', () => {
    expect(page).toContain('| `BACKOFFICE_SESSION_TTL_MS` | 28800000 (8 h) |');
    expect(page).toContain(
      '| `WITHDRAWAL_DAILY_LIMIT_CENTAVOS` | 5000000 (R$ 50.000,00) | `withdrawals.dailyLimitCentavos` |',
    );
    expect(page).not.toContain('dev-webhook-secret-change-me');
  });
});
