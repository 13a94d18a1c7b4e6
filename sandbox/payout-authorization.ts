import type { PayoutAuthorizationAnswer } from '../contracts/payout-authorization';

// The operator's payout authorization, emulated (docs/payout-controls.md, The operator's
// authorization): it answers pixflow's signed question about a payout by the amount's last two
// digits below, or by the decision set for its transactionId through the control endpoint, as the
// operator's backend answers from its wallet balance and its own rules. Every other amount is
// approved. `no_answer` holds the request open until pixflow gives up, as a backend that hangs.

/** What the emulation does with a question: answers it, or never does. */
export type EmulatedDecision = PayoutAuthorizationAnswer | { decision: 'no_answer' };

export interface PayoutAuthorizationTestAmount {
  /** The amount's centavos, its last two digits: R$ 123,13 ends in 13. */
  centavos: number;
  decision: EmulatedDecision;
  description: string;
}

export const payoutAuthorizationTestAmounts: readonly PayoutAuthorizationTestAmount[] = [
  {
    centavos: 13,
    decision: { decision: 'deny', reason: "sandbox: the operator's wallet balance is too low" },
    description: 'a backend whose wallet cannot cover the payout: it ends `refused`, `authorization_denied`',
  },
  {
    centavos: 29,
    decision: { decision: 'no_answer' },
    description:
      "a backend that hangs: each attempt is held open until pixflow gives up (`PAYOUT_AUTHORIZATION_TIMEOUT_MS`), then the rules policy's `payouts.authorizationOnNoAnswer` decides",
  },
];

/** An amount ending in these centavos, as `amountCentavos` and as money: `12313` (R$ 123,13). */
const example = (centavos: number) => {
  const cents = String(centavos).padStart(2, '0');
  return `\`123${cents}\` (R$ 123,${cents})`;
};

/** The emulation's table as Markdown (docs/sandbox.md). */
export function payoutAuthorizationTestAmountsMarkdown(): string {
  return [
    '| `amountCentavos` | answer | behaviour |',
    '|---|---|---|',
    ...payoutAuthorizationTestAmounts.map((t) => {
      const answer =
        t.decision.decision === 'deny'
          ? `deny, "${t.decision.reason}"`
          : t.decision.decision.replace('_', ' ');
      return `| ending in ${String(t.centavos).padStart(2, '0')}: ${example(t.centavos)} | ${answer} | ${t.description} |`;
    }),
    '| any other amount | approve | the payout is sent |',
  ].join('\n');
}

export interface PayoutAuthorizationEmulation {
  /** Decisions set through the control endpoint, per transactionId, over the test amounts'. */
  decisions: Map<string, EmulatedDecision>;
  /** Signed questions on contract, each attempt counted, per transactionId. */
  asked: Map<string, number>;
  /** Questions refused for their signature. */
  refused: number;
  /** Questions held open now (`no_answer`): each until its caller gives up and closes it. */
  held: number;
}

export function emptyPayoutAuthorization(): PayoutAuthorizationEmulation {
  return { decisions: new Map(), asked: new Map(), refused: 0, held: 0 };
}

const byCentavos = new Map(payoutAuthorizationTestAmounts.map((t) => [t.centavos, t.decision]));

export function decisionFor(
  a: PayoutAuthorizationEmulation,
  transactionId: string,
  amountCentavos: number,
): EmulatedDecision {
  return a.decisions.get(transactionId) ?? byCentavos.get(amountCentavos % 100) ?? { decision: 'approve' };
}
