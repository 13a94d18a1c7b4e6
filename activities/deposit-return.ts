import { ApplicationFailure } from '@temporalio/activity';
import { type CollectingConnector, canReturn, type PixReturn, type ReturnLookup } from '../connectors/types';
import type { ReturnByHandReason } from '../contracts/deposit';
import { decidedUnder } from '../policy/brand';
import { brandConnectorsReader, brandOfCallingFlow } from './brand-connectors';
import type { ActivityDeps } from './deps';
import { providerCall, unclassifiedNotice } from './errors';

// A held deposit's money sent back to its payer through the connector that received it. The
// return's id is derived from the deposit, so a retried ask (or a run that asks again) finds the
// return already asked instead of asking a second one.

/** A return to ask for: the deposit's connector, the received Pix, pixflow's id of the return. */
export interface DepositReturnAsk {
  connector: string;
  e2eId: string;
  returnId: string;
  amountCentavos: number;
  /** Shown to the payer by their bank. */
  description?: string;
}

/** A return as the connector holds it (the workflows see connectors' types through here). */
export type ReturnSeen = PixReturn;

/** The return as the connector holds it, or why it is left to an operator's hands. */
export type DepositReturnAnswer =
  | { kind: 'asked'; return: PixReturn }
  | { kind: 'by_hand'; why: ReturnByHandReason };

/** Whether the rules return a held third party's money by themselves, and after how long. */
export interface ReturnRules {
  autoReturn: boolean;
  afterMs: number;
  policyVersion: number;
  /** The brand's overrides' version laid on the operator's, when the brand has one. */
  brandPolicyVersion?: number;
}

export function createDepositReturnActivities({
  provider,
  collectors,
  connectorsFor,
  pool,
  policy,
  countUnclassified,
}: Pick<
  ActivityDeps,
  'provider' | 'collectors' | 'connectorsFor' | 'pool' | 'policy' | 'countUnclassified'
>) {
  const notice = unclassifiedNotice({ pool, countUnclassified });
  const brands = brandConnectorsReader({ provider, collectors, connectorsFor });
  /**
   * The collecting connector of that name among the brand's of the deposit the activity runs for
   * (its flow's id names it: the deposit's, or its return flow's); none of another brand's.
   */
  const connectorNamed = async (name: string): Promise<CollectingConnector | undefined> =>
    (await brands.of(brandOfCallingFlow())).collectors.collector(name);
  return {
    /**
     * Asks the deposit's connector to send the money back, unless it knows the return already
     * (a retry after the ask went through, or a run asking again): looked up first, asked only
     * when not found. A connector that cannot return, or none of that name at the deposit's
     * brand, answers `by_hand`.
     */
    async requestDepositReturn(ask: DepositReturnAsk): Promise<DepositReturnAnswer> {
      const connector = await connectorNamed(ask.connector);
      if (!connector) return { kind: 'by_hand', why: 'connector_not_configured' };
      if (!canReturn(connector)) return { kind: 'by_hand', why: 'connector_cannot_return' };
      const known = await providerCall(() => connector.lookUpReturn(ask.e2eId, ask.returnId), notice);
      if (known.state !== 'not_found') return { kind: 'asked', return: known };
      const asked = await providerCall(
        () =>
          connector.requestReturn({
            e2eId: ask.e2eId,
            returnId: ask.returnId,
            amountCentavos: ask.amountCentavos,
            ...(ask.description ? { description: ask.description } : {}),
          }),
        notice,
      );
      return { kind: 'asked', return: asked };
    },

    /** Where an asked return stands at the connector that received the deposit. */
    async lookUpDepositReturn(connectorName: string, e2eId: string, returnId: string): Promise<ReturnLookup> {
      const connector = await connectorNamed(connectorName);
      // Asked through it, so configured then: retried until the worker has it again.
      if (!connector || !canReturn(connector)) {
        throw ApplicationFailure.retryable(
          `no connector ${connectorName} that returns received Pix is configured`,
          'ConnectorNotConfigured',
        );
      }
      return providerCall(() => connector.lookUpReturn(e2eId, returnId), notice);
    },

    /**
     * The rules in force on a held deposit's return, its brand's (named by the flow's id):
     * automatic after the review delay, or not.
     */
    async returnRulesFor(): Promise<ReturnRules> {
      const inForce = await policy.current(brandOfCallingFlow());
      return {
        autoReturn: inForce.policy.deposits.autoReturnThirdParty,
        afterMs: inForce.policy.deposits.autoReturnAfterMs,
        ...decidedUnder(inForce),
      };
    },
  };
}
