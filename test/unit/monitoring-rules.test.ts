import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../common/config';
import type { Movement } from '../../db/alerts';
import { type AlertRuleSettings, evaluateRules, type RuleInput } from '../../monitoring/rules';
import { policyFromEnv } from '../../policy/seed';

// The monitoring rules as functions of a person's movements (docs/monitoring.md): the edges of
// each (the band, the share, the window, "nothing between"), each rule off at 0, and the settings
// refused by name when they make no sense. The real stack's scenarios are in test/monitoring.

const MIN = 60_000;
const settings: AlertRuleSettings = {
  structuring: { belowCentavos: 5_000, bandPercent: 10, count: 3, windowMs: 10 * MIN },
  quickInOut: { windowMs: 10 * MIN, sharePercent: 80, minCentavos: 10_000 },
  windowTotal: { aboveCentavos: 100_000, windowMs: 10 * MIN, of: 'each' },
  newAccount: { windowMs: 10 * MIN, minCentavos: 50_000 },
};

const T0 = Date.parse('2026-11-26T12:00:00Z');
let n = 0;
const move = (type: Movement['type'], amountCentavos: number, atMin: number): Movement => ({
  workflowId: `${type}-${++n}`,
  type,
  status: 'completed',
  cpfHash: 'h',
  cpfMasked: '***.111.222-**',
  amountCentavos,
  at: new Date(T0 + atMin * MIN),
});

/** The rules that trip on the last movement of a history. */
function rulesOn(history: Movement[], more: Partial<RuleInput> = {}, s = settings): string[] {
  const trigger = history.at(-1) as Movement;
  return evaluateRules({ trigger, movements: history, recent: [], ...more }, s).map((f) => f.rule);
}

describe('monitoring rules', () => {
  it('structuring: the third deposit just under the value within the window, not below the band or above it', () => {
    expect(
      rulesOn([move('deposit', 4_500, 0), move('deposit', 4_999, 1), move('deposit', 4_700, 2)]),
    ).toEqual(['structuring']);
    // Two only; one below the band; one at the value; one out of the window.
    expect(rulesOn([move('deposit', 4_900, 0), move('deposit', 4_900, 1)])).toEqual([]);
    expect(
      rulesOn([move('deposit', 4_499, 0), move('deposit', 4_900, 1), move('deposit', 4_900, 2)]),
    ).toEqual([]);
    expect(
      rulesOn([move('deposit', 5_000, 0), move('deposit', 4_900, 1), move('deposit', 4_900, 2)]),
    ).toEqual([]);
    expect(
      rulesOn([move('deposit', 4_900, -11), move('deposit', 4_900, 1), move('deposit', 4_900, 2)]),
    ).toEqual([]);
    // Already flagged within the window: the fourth adds nothing.
    const four = [
      move('deposit', 4_900, 0),
      move('deposit', 4_900, 1),
      move('deposit', 4_900, 2),
      move('deposit', 4_900, 3),
    ];
    expect(
      rulesOn(four, {
        recent: [{ rule: 'structuring', facts: { at: new Date(T0 + 2 * MIN).toISOString() } }],
      }),
    ).toEqual([]);
    expect(
      rulesOn(four, {}, { ...settings, structuring: { ...settings.structuring, belowCentavos: 0 } }),
    ).toEqual([]);
  });

  it('quick in-out: most of the deposits out within the window with no payout between', () => {
    expect(rulesOn([move('deposit', 20_000, 0), move('withdrawal', 16_000, 5)])).toEqual(['quick_in_out']);
    // Less than the share; below the minimum; after the window.
    expect(rulesOn([move('deposit', 20_000, 0), move('withdrawal', 15_999, 5)])).toEqual([]);
    expect(rulesOn([move('deposit', 9_000, 0), move('withdrawal', 9_000, 5)])).toEqual([]);
    expect(rulesOn([move('deposit', 20_000, 0), move('withdrawal', 20_000, 11)])).toEqual([]);
    // Another payout between: only the deposits after it count, and there are none.
    expect(
      rulesOn([move('deposit', 20_000, 0), move('withdrawal', 1_000, 1), move('withdrawal', 19_000, 2)]),
    ).toEqual([]);
    expect(
      rulesOn(
        [move('deposit', 20_000, 0), move('withdrawal', 19_000, 5)],
        {},
        {
          ...settings,
          quickInOut: { ...settings.quickInOut, windowMs: 0 },
        },
      ),
    ).toEqual([]);
  });

  it('window total: over the bound in the window, by direction, once per window', () => {
    expect(rulesOn([move('deposit', 60_000, 0), move('deposit', 40_001, 9)])).toEqual(['window_total']);
    expect(rulesOn([move('deposit', 60_000, 0), move('deposit', 40_000, 9)])).toEqual([]);
    expect(rulesOn([move('deposit', 60_000, -11), move('deposit', 50_000, 0)])).toEqual([]);
    const deposits = [move('deposit', 60_000, 0), move('deposit', 50_000, 1)];
    expect(
      rulesOn(deposits, {}, { ...settings, windowTotal: { ...settings.windowTotal, of: 'withdrawals' } }),
    ).toEqual([]);
    // A withdrawals alert in the window does not silence the deposits'.
    const flagged = (direction: string) => ({
      recent: [{ rule: 'window_total', facts: { at: new Date(T0).toISOString(), direction } }],
    });
    expect(rulesOn(deposits, flagged('withdrawals'))).toEqual(['window_total']);
    expect(rulesOn(deposits, flagged('deposits'))).toEqual([]);
  });

  it('new account: a large payout within the window after registering', () => {
    const registeredAt = new Date(T0);
    expect(rulesOn([move('withdrawal', 50_000, 10)], { registeredAt })).toEqual(['new_account']);
    expect(rulesOn([move('withdrawal', 50_000, 11)], { registeredAt })).toEqual([]);
    expect(rulesOn([move('withdrawal', 49_999, 1)], { registeredAt })).toEqual([]);
    expect(rulesOn([move('withdrawal', 50_000, 1)])).toEqual([]);
  });

  it('settings: defaults with every rule on, 0 turns one off, nonsense refused by name', () => {
    // The thresholds are the policy's alerts, seeded from these variables.
    const alertRuleSettings = (env: Record<string, string>): AlertRuleSettings => policyFromEnv(env).alerts;
    const s = alertRuleSettings({});
    expect(s.structuring).toEqual({
      belowCentavos: 5_000_000,
      bandPercent: 10,
      count: 3,
      windowMs: 86_400_000,
    });
    expect(s.windowTotal.of).toBe('each');
    expect(alertRuleSettings({ ALERT_NEW_ACCOUNT_WINDOW_MS: '0' }).newAccount.windowMs).toBe(0);
    for (const [name, value] of [
      ['ALERT_STRUCTURING_BAND_PERCENT', '0'],
      ['ALERT_STRUCTURING_COUNT', '1'],
      ['ALERT_QUICK_IN_OUT_SHARE_PERCENT', '101'],
      ['ALERT_WINDOW_TOTAL_OF', 'both'],
      ['ALERT_NEW_ACCOUNT_MIN_CENTAVOS', '-1'],
    ] as const) {
      expect(() => alertRuleSettings({ [name]: value }), name).toThrow(ConfigError);
      expect(() => alertRuleSettings({ [name]: value }), name).toThrow(name);
    }
  });
});
