import { z } from 'zod';

// The PSP's fault knobs, set through POST /sandbox/faults (a partial update merged into the
// current knobs), as the first provider's sandbox has them (../faults.ts), plus `down` (the whole
// API answers 503) and `failReturnsNext` (the next returns end NAO_REALIZADO).

export const endpointNames = [
  'token',
  'putCob',
  'getCob',
  'getPix',
  'listPix',
  'putDevolucao',
  'getDevolucao',
  'putWebhook',
  'getWebhook',
  'deleteWebhook',
] as const;
export const endpointNameSchema = z.enum(endpointNames);
export type EndpointName = (typeof endpointNames)[number];

const count = z.number().int().min(0);
const probability = z.number().min(0).max(1);

const actThenFailSchema = z.object({
  /**
   * The call acts (the cob exists, the return is asked), then its answer is a 500 (`error`),
   * comes only after `delayMs` (`timeout`, past the caller's timeout), or never (`hang`).
   */
  mode: z.enum(['error', 'timeout', 'hang']),
  count,
  delayMs: count.default(30_000),
});

const faultsSchema = z.object({
  /** Every API call (the token's too) answers 503 ServicoIndisponivel with Retry-After. */
  down: z.boolean(),
  retryAfterSeconds: count,
  latency: z.object({ fixedMs: count, spikeMs: count, spikeProbability: probability }),
  /** Probability per endpoint of answering 503 without acting. */
  errorRate: z.partialRecord(endpointNameSchema, probability),
  /** The next N calls of an endpoint answer 503 without acting. */
  failNext: z.partialRecord(endpointNameSchema, count),
  actThenFail: z.partialRecord(endpointNameSchema, actThenFailSchema),
  /** The next N returns (asked or MED) end NAO_REALIZADO with `failReturnsReason` as motivo. */
  failReturnsNext: count,
  failReturnsReason: z.string().min(1).max(140),
  webhooks: z.object({
    /** The next N webhook posts are lost (never delivered). */
    dropNext: count,
    /** Every post is delivered 1 + N times. */
    duplicate: count,
    /** Every post waits N ms before its first attempt. */
    delayMs: count,
  }),
});
export type Faults = z.infer<typeof faultsSchema>;

export const faultsPatchSchema = z
  .object({
    down: faultsSchema.shape.down,
    retryAfterSeconds: count,
    latency: faultsSchema.shape.latency.partial(),
    errorRate: faultsSchema.shape.errorRate,
    failNext: faultsSchema.shape.failNext,
    actThenFail: faultsSchema.shape.actThenFail,
    failReturnsNext: count,
    failReturnsReason: faultsSchema.shape.failReturnsReason,
    webhooks: faultsSchema.shape.webhooks.partial(),
  })
  .partial()
  .strict();
export type FaultsPatch = z.input<typeof faultsPatchSchema>;

export function defaultFaults(): Faults {
  return {
    down: false,
    retryAfterSeconds: 1,
    latency: { fixedMs: 0, spikeMs: 0, spikeProbability: 0 },
    errorRate: {},
    failNext: {},
    actThenFail: {},
    failReturnsNext: 0,
    failReturnsReason: 'Conta do usuário pagador encerrada',
    webhooks: { dropNext: 0, duplicate: 0, delayMs: 0 },
  };
}

export function applyFaultsPatch(faults: Faults, patch: z.output<typeof faultsPatchSchema>): Faults {
  return {
    ...faults,
    ...patch,
    latency: { ...faults.latency, ...patch.latency },
    errorRate: { ...faults.errorRate, ...patch.errorRate },
    failNext: { ...faults.failNext, ...patch.failNext },
    actThenFail: { ...faults.actThenFail, ...patch.actThenFail },
    webhooks: { ...faults.webhooks, ...patch.webhooks },
  };
}

export { latencyFor, takeActThenFail, takeFailure } from '../fault-knobs';

/** Whether the return asked now ends NAO_REALIZADO (consumes one `failReturnsNext`). */
export function takeReturnFailure(faults: Faults): string | undefined {
  if (faults.failReturnsNext <= 0) return undefined;
  faults.failReturnsNext -= 1;
  return faults.failReturnsReason;
}
