import { Router } from 'express';
import { brandOf } from '../api-keys/authenticate';
import { cpfHash } from '../common/pii';
import {
  type BiometricsState,
  biometricLinkUpdate,
  biometricsStateQuery,
  biometricsWorkflowId,
  type LivenessLinkAnswer,
} from '../contracts/biometrics';
import { biometricsInputSchema } from '../contracts/biometrics-input';
import { knowsCustomer } from '../db/customer-brands';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import { askBiometrics, BiometricsUnavailableError } from '../starters/biometrics';
import { flowState, isNotFound } from '../starters/workflow-calls';
import type { biometricsWorkflow } from '../workflows/biometrics';
import { type BiometricsStateView, biometricsResponseSchema } from './biometrics-schemas';
import type { ApiDeps } from './deps';
import { flowNotFound } from './flow-answers';
import { cpfParamsSchema } from './schema-parts';

const biometricsUnavailable = (detail: string) =>
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
  // The CPF's form, as every path parameter is checked.
  parse(biometricsInputSchema.pick({ cpf: true }), 'path', { cpf });
  try {
    return await askBiometrics(temporal, {
      cpf,
      cpfHash: cpfHash(cpf, config.PII_HASH_KEY),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      timings,
      update: biometricLinkUpdate,
      args: [],
    });
  } catch (err) {
    if (err instanceof BiometricsUnavailableError) throw biometricsUnavailable(err.message);
    throw err;
  }
}

/** The biometric identification route, as /openapi.json describes it. */
export const biometricsOperations = {
  state: {
    operationId: 'getBiometrics',
    method: 'get',
    path: '/biometrics/:cpf',
    tag: 'Onboarding',
    summary: "The person's current or last biometric identification",
    description:
      "Its status (issuing_link, awaiting_identification, then passed, failed, expired or unavailable) and link (the QR code is in the liveness link's own answer).",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: biometricsResponseSchema }],
    // A biometric identification is the identity check of an onboarded person.
    scopes: ['onboardings:read'],
  },
} satisfies Record<string, Operation>;

export function biometricsRoutes({ config, temporal, pool }: ApiDeps) {
  const r = Router();

  route(r, biometricsOperations.state, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const hash = cpfHash(cpf, config.PII_HASH_KEY);
    // A person the acting brand has not met is, to it, a CPF never identified.
    if (!(await knowsCustomer(pool, hash, brandOf(res)))) {
      throw flowNotFound('biometric identification for this CPF');
    }
    const workflowId = biometricsWorkflowId(hash);
    // The latest run: the open identification, or the last one.
    const handle = temporal.workflow.getHandle<typeof biometricsWorkflow>(workflowId);
    try {
      const state = await flowState(handle, biometricsStateQuery);
      res.json({ workflowId, state: biometricsStateView(state) });
    } catch (err) {
      if (isNotFound(err)) throw flowNotFound('biometric identification for this CPF');
      throw err;
    }
  });

  return r;
}
