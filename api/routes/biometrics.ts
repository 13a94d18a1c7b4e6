import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Router } from 'express';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { startSearchAttributes } from '../../common/search-attributes';
import {
  BIOMETRICS_FINISHED,
  type BiometricsInput,
  type BiometricsState,
  biometricLinkUpdate,
  biometricsStateQuery,
  biometricsWorkflowId,
  type LivenessLinkAnswer,
} from '../../contracts/biometrics';
import { biometricsInputSchema } from '../../contracts/biometrics-input';
import type { biometricsWorkflow } from '../../workflows/biometrics';
import type { ApiDeps } from '../deps';
import { Problem } from '../problem';
import { isNotFound, notFound, parse } from '../route-helpers';
import { type BiometricsStateView, cpfParamsSchema } from '../schemas';

/** What a biometric identification asks the provider with: no caller chooses them. */
const BIOMETRICS_PLAN = 'plan_basic';
const BIOMETRICS_EVENT = 'biometric_identification';

const unavailable = (detail: string) =>
  new Problem(409, 'biometrics-unavailable', 'No biometric identification available', detail);

/** The state as the API answers it: the link without its QR image (the link's own answer carries it). */
function biometricsStateView({ link, ...state }: BiometricsState): BiometricsStateView {
  if (!link) return state;
  const { qrcode: _qrcode, ...rest } = link;
  return { ...state, link: rest };
}

/**
 * The liveness link of an approved person: update-with-start attaches to the open biometric
 * identification (the same link while it runs) or starts a new one when none is open.
 */
export async function biometricLink(
  { config, temporal, timings }: ApiDeps,
  cpf: string,
): Promise<LivenessLinkAnswer & { workflowId: string }> {
  const hash = cpfHash(cpf, config.PII_HASH_KEY);
  const workflowId = biometricsWorkflowId(hash);
  const input: BiometricsInput = {
    ...parse(biometricsInputSchema, 'path', { cpf, plan: BIOMETRICS_PLAN, event: BIOMETRICS_EVENT }),
    ...(timings ? { timings } : {}),
  };
  // A run that has just ended refuses the ask until it is closed: then the next one starts.
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await temporal.workflow.executeUpdateWithStart(biometricLinkUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation<typeof biometricsWorkflow>(
          'biometricsWorkflow',
          {
            workflowId,
            taskQueue: config.TEMPORAL_TASK_QUEUE,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
            // Each identification is a run of its own: a closed one is followed by a new one.
            workflowIdReusePolicy: 'ALLOW_DUPLICATE',
            staticSummary: `Biometric identification ${maskCpf(cpf)}`,
            typedSearchAttributes: startSearchAttributes({
              type: 'biometrics',
              status: 'issuing_link',
              cpfHash: hash,
              cpfMasked: maskCpf(cpf),
            }),
          },
        ),
      });
      return { ...answer, workflowId };
    } catch (err) {
      if (!(err instanceof WorkflowUpdateFailedError)) throw err;
      const cause = err.cause;
      const ended = cause instanceof ApplicationFailure && cause.type === BIOMETRICS_FINISHED;
      // The run ended without a link: the provider gave none (asked again, it would not either).
      if (ended && cause.details?.[0] === 'unavailable') throw unavailable(cause.message);
      if (attempt >= 20) throw unavailable(cause?.message ?? err.message);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export function biometricsRoutes({ config, temporal }: ApiDeps) {
  const r = Router();

  r.get('/biometrics/:cpf', async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const workflowId = biometricsWorkflowId(cpfHash(cpf, config.PII_HASH_KEY));
    // The latest run: the open identification, or the last one.
    const handle = temporal.workflow.getHandle<typeof biometricsWorkflow>(workflowId);
    try {
      const state = await handle.query(biometricsStateQuery);
      res.json({ workflowId, state: biometricsStateView(state) });
    } catch (err) {
      if (isNotFound(err)) throw notFound('biometric identification for this CPF');
      throw err;
    }
  });

  return r;
}
