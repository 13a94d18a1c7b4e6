import type { EligibilityAnswer } from '../eligibility/contract';

// The operator's eligibility service, emulated (docs/rules.md, Eligibility): it answers pixflow's signed
// question about a CPF from the test CPFs below or a status set through the control endpoint, as
// the real one answers from the ministry's registry of impeded people. Every other valid CPF is
// eligible. Its outage knob makes it fail the way a real one can: 503s, or no answer in time.

export interface EligibilityTestCpf {
  cpf: string;
  answer: EligibilityAnswer;
  description: string;
}

/** Generated once with @fnando/cpf `generate()`; none is a KYC test document. */
export const eligibilityTestCpfs: readonly EligibilityTestCpf[] = [
  {
    cpf: '74436147134',
    answer: { status: 'impeded', reason: 'social_benefit' },
    description: 'impeded: receives a social benefit (Bolsa Família, BPC)',
  },
  {
    cpf: '45717804512',
    answer: { status: 'impeded', reason: 'self_excluded', until: '2099-12-31T23:59:59.000Z' },
    description: 'impeded: self-excluded, until the end of 2099',
  },
  {
    cpf: '12684627304',
    answer: { status: 'impeded', reason: 'court_order' },
    description: "impeded: by a court's order",
  },
];

/** The emulation's table as Markdown (docs/sandbox.md). */
export function eligibilityTestCpfsMarkdown(): string {
  return [
    '| CPF | answer | behaviour |',
    '|---|---|---|',
    ...eligibilityTestCpfs.map(
      (d) =>
        `| \`${d.cpf}\` | ${d.answer.status === 'impeded' ? `impeded, \`${d.answer.reason}\`` : 'eligible'} | ${d.description} |`,
    ),
    '| any other valid CPF | eligible | not in the registry |',
  ].join('\n');
}

export interface EligibilityEmulation {
  /** Statuses set through the control endpoint, over the test CPFs'. */
  changes: Map<string, EligibilityAnswer>;
  /** `error`: answers 503; `timeout`: answers only after delayMs; for `remaining` calls (null: until cleared). */
  outage: { mode: 'none' | 'error' | 'timeout'; remaining: number | null; delayMs: number };
  /** Signed questions answered (or failed by the outage). */
  checks: number;
  /** Questions refused for their signature. */
  refused: number;
}

export function emptyEligibility(): EligibilityEmulation {
  return {
    changes: new Map(),
    outage: { mode: 'none', remaining: null, delayMs: 30_000 },
    checks: 0,
    refused: 0,
  };
}

const byCpf = new Map(eligibilityTestCpfs.map((d) => [d.cpf, d.answer]));

export function answerFor(e: EligibilityEmulation, cpf: string): EligibilityAnswer {
  return e.changes.get(cpf) ?? byCpf.get(cpf) ?? { status: 'eligible' };
}
