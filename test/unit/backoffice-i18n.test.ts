import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyStatuses } from '../../api-keys/admin';
import { formatterFor } from '../../backoffice/format';
import { catalogs, type Language, labelsFor, languages } from '../../backoffice/i18n';
import { providerErrorCodes } from '../../connectors/errors';
import { biometricsStatuses } from '../../contracts/biometrics';
import { accountKinds, customerVerifications } from '../../contracts/customer';
import { depositStatuses } from '../../contracts/deposit';
import { eventTypes } from '../../contracts/events';
import { LIVENESS_STATUSES as statusVerifications } from '../../contracts/flow';
import { onboardingStatuses } from '../../contracts/onboarding';
import {
  biometricsReasons,
  depositReasons,
  IMPEDED_PREFIX,
  INVALID_PIX_KEY,
  KYC_STATUS_PREFIX,
  kycReasons,
  kycRegistryStatuses,
  LIVENESS_REFUSED_PREFIX,
  onboardingReasons,
  PAYOUT_REJECTED_REASON,
  PROVIDER_CONTRADICTS,
  stepUpCauses,
  withdrawalReasons,
} from '../../contracts/reasons';
import { withdrawalRefusals } from '../../contracts/rules';
import { withdrawalStatuses } from '../../contracts/withdrawal';
import { queueIds } from '../../db/backoffice-queues';
import { actionOutcomes, auditReasons, operatorActionNames } from '../../db/operator-actions';
import { operatorRoles } from '../../db/operators';
import { impededReasons } from '../../eligibility/contract';

// The back office's one catalog against the codes pixflow can produce, taken from the contracts'
// own lists: every status, reason, action and outcome has words in every language, so a code
// added to a contract without a label fails here. Words are never a code in disguise.

const ROOT = path.resolve(__dirname, '../..');

/** A raw code: snake_case, or a dotted action. */
const looksLikeCode = /\b[a-z0-9]+(?:_[a-z0-9]+)+\b|\b[a-z]+\.[a-z_]+\b/;

function expectWords(lang: Language, what: string, code: string, words: string) {
  expect(words, `${lang} ${what} ${code}`).not.toBe(code);
  expect(words.trim(), `${lang} ${what} ${code}`).not.toBe('');
  expect(words, `${lang} ${what} ${code}: "${words}"`).not.toMatch(looksLikeCode);
}

/** Every reason code the contracts list, and one of each family with its every part. */
const everyReason = [
  ...kycReasons,
  ...kycRegistryStatuses.filter((s) => s !== 'regular').map((s) => `${KYC_STATUS_PREFIX}${s}`),
  `${KYC_STATUS_PREFIX}null`,
  ...onboardingReasons,
  ...impededReasons.map((r) => `${IMPEDED_PREFIX}${r}`),
  ...providerErrorCodes.map((c) => `${LIVENESS_REFUSED_PREFIX}${c.toLowerCase()}`),
  ...depositReasons,
  ...providerErrorCodes,
  ...withdrawalReasons,
  ...withdrawalRefusals,
  ...stepUpCauses,
  `${INVALID_PIX_KEY}: CPF key must be 11 digits`,
  `${PAYOUT_REJECTED_REASON}: HTTP 422`,
  ...biometricsReasons,
  ...statusVerifications.map((s) => `${PROVIDER_CONTRADICTS}: ${s}`),
  // A refused withdrawal carries KYC's reasons joined by commas.
  `${KYC_STATUS_PREFIX}suspenso,under_18`,
];

describe.each(languages)('the back office in %s', (lang) => {
  const label = labelsFor(lang);

  it('names every status of every flow', () => {
    for (const [type, statuses] of [
      ['onboarding', onboardingStatuses],
      ['deposit', depositStatuses],
      ['withdrawal', withdrawalStatuses],
      ['biometrics', biometricsStatuses],
    ] as const) {
      expectWords(lang, 'flow type', type, label.flowType(type));
      for (const s of statuses) expectWords(lang, `${type} status`, s, label.status(type, s));
    }
    for (const v of customerVerifications) expectWords(lang, 'verification', v, label.verification(v));
    for (const s of statusVerifications) expectWords(lang, 'liveness', s, label.liveness(s));
    for (const s of kycRegistryStatuses) expectWords(lang, 'registry status', s, label.registryStatus(s));
    for (const s of keyStatuses) expectWords(lang, 'API key status', s, label.keyStatus(s));
  });

  it('names every reason code, each family with each of its parts', () => {
    for (const code of everyReason) expectWords(lang, 'reason', code, label.reason(code));
    // The provider's own words for a failed payout are shown as they are.
    expect(label.reason('conta encerrada')).toBe('conta encerrada');
  });

  it('names every event type of the timeline', () => {
    for (const type of eventTypes) expectWords(lang, 'event', type, label.event(type));
  });

  it('names every action, outcome and reason of the audit trail, every role and queue', () => {
    for (const a of operatorActionNames) expectWords(lang, 'action', a, label.action(a));
    for (const o of actionOutcomes) expectWords(lang, 'outcome', o, label.outcome(o));
    for (const r of auditReasons) expectWords(lang, 'audit reason', r, label.auditReason(r));
    for (const r of operatorRoles) expectWords(lang, 'role', r, label.role(r));
    for (const k of accountKinds) expectWords(lang, 'account kind', k, label.accountKind(k));
    for (const q of queueIds) {
      expectWords(lang, 'queue', q, label.queueTitle(q));
      expect(label.queueHelp(q)).not.toBe('');
    }
    // A change of status reads in words: the flow's by its action, a key's as a key's.
    expect(label.change('onboarding.approve', { status: 'awaiting_review' }, { status: 'approved' })).toBe(
      `${label.status('onboarding', 'awaiting_review')} → ${label.status('onboarding', 'approved')}`,
    );
    expect(label.change('api_key.revoke', { status: 'active' }, { status: 'revoked' })).toBe(
      `${label.keyStatus('active')} → ${label.keyStatus('revoked')}`,
    );
  });

  it('has every word of the catalog, none empty', () => {
    const empties: string[] = [];
    const walk = (v: unknown, at: string) => {
      if (typeof v === 'string' && v.trim() === '') empties.push(at);
      else if (v && typeof v === 'object') for (const [k, w] of Object.entries(v)) walk(w, `${at}.${k}`);
    };
    walk(catalogs[lang], lang);
    expect(empties).toEqual([]);
  });
});

describe('the two languages', () => {
  it('have the same words to say, and say them differently', () => {
    const keys = (v: unknown, at = ''): string[] =>
      v && typeof v === 'object' ? Object.entries(v).flatMap(([k, w]) => keys(w, `${at}.${k}`)) : [at];
    expect(keys(catalogs.en).sort()).toEqual(keys(catalogs['pt-BR']).sort());
    expect(catalogs['pt-BR'].signIn.title).not.toBe(catalogs.en.signIn.title);
    expect(labelsFor('pt-BR').status('deposit', 'held')).toBe('Retido');
    expect(labelsFor('pt-BR').reason('third_party_payer')).toMatch(/^Pago por terceiro/);
  });

  it('write money and days the way each reads them: pt-BR for people in Brazil, never month first', () => {
    const at = '2026-11-26T17:03:05.000Z';
    const pt = formatterFor('America/Sao_Paulo', 'pt-BR', new Date(at));
    expect(pt.brl(123_456).replace(/\s/g, ' ')).toBe('R$ 1.234,56');
    expect(pt.time(at)).toBe('26/11/2026, 14:03:05 BRT');
    expect(pt.day('2026-11-26')).toBe('26/11/2026');
    expect(pt.age('2026-11-26T15:00:00.000Z')).toBe('2 h 3 min');
    const en = formatterFor('America/Sao_Paulo', 'en', new Date(at));
    expect(en.day('2026-11-03')).toBe('03/11/2026');
    expect(en.time(at)).toMatch(/^26\/11\/2026, 14:03:05 /);
  });
});

describe('the reason codes the flows write', () => {
  /**
   * Codes written where the flows and their activities give a status its reason: a status
   * change's second argument, a money rule's refusal, a KYC reason pushed, a step-up's cause.
   */
  const written = (): Array<[string, string]> => {
    const patterns = [
      /(?:finish|moveTo)\(\s*'[a-z_]+',\s*'([a-z0-9_]+)'/g,
      /(?:finish|moveTo)\(\s*'[a-z_]+',\s*`([a-z0-9_]+): /g,
      /refused\('([a-z0-9_]+)'\)/g,
      /reasons\.push\('([a-z0-9_]+)'\)/g,
      /cause: '([a-z0-9_]+)'/g,
      /\[[A-Za-z]+Error, '([a-z0-9_]+)'\]/g,
    ];
    return ['workflows', 'activities', 'customers'].flatMap((dir) =>
      readdirSync(path.join(ROOT, dir))
        .filter((f) => f.endsWith('.ts'))
        .flatMap((f) => {
          const source = readFileSync(path.join(ROOT, dir, f), 'utf8');
          return patterns.flatMap((p) =>
            [...source.matchAll(p)].map((m): [string, string] => [`${dir}/${f}`, m[1] ?? '']),
          );
        }),
    );
  };

  it('are found in the sources (the scan reads them)', () => {
    const codes = written().map(([, c]) => c);
    for (const known of [
      'qr_expired_unpaid',
      'not_verified',
      'under_18',
      'amount_above_step_up',
      INVALID_PIX_KEY,
    ])
      expect(codes).toContain(known);
  });

  it.each(languages)('each has words in %s', (lang) => {
    const label = labelsFor(lang);
    for (const [file, code] of written()) {
      const sample = code === INVALID_PIX_KEY || code === PAYOUT_REJECTED_REASON ? `${code}: x` : code;
      expectWords(lang, `reason written in ${file}`, code, label.reason(sample));
    }
  });
});
