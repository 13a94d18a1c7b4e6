import { z } from 'zod';
import { impededReasons } from '../eligibility/contract';
import { ALERT_RAISED, alertRules } from './alert';
import { biometricsStatuses } from './biometrics';
import { brandIdSchema } from './brand';
import { customerVerifications } from './customer';
import { depositStatuses } from './deposit';
import type { FlowType } from './flow';
import { onboardingStatuses } from './onboarding';
import { withdrawalStatuses } from './withdrawal';

// Outbound events: what pixflow tells a backend happened. Every status change of a flow is one
// event `<flow type>.<status>`; a change of a person's verification is `customer.verification_updated`;
// a withdrawal still open at its deadline's marks is `withdrawal.deadline_at_risk`, then
// `withdrawal.deadline_missed`; a completed deposit's money sent back without pixflow asking
// (MED) is `deposit.reversed`; a person the registry of impeded people names is
// `customer.impeded`, and one an operator closes for it `customer.closed`; an endpoint pixflow stops
// delivering to is `webhook_endpoint.disabled`; a monitoring rule that flags a person's movement
// is `alert.raised`. The same schemas
// validate the pull API's answers, describe the webhooks in the OpenAPI document and type the
// relay's bodies. No workflow imports this file, so zod is welcome here.

/** The flow types, as the API takes and answers them. */
export const flowTypeSchema = z.enum([
  'onboarding',
  'deposit',
  'withdrawal',
  'biometrics',
]) satisfies z.ZodType<FlowType>;

/** The statuses each flow type can be in, from the flows' contracts. */
export const flowStatuses: Record<FlowType, readonly string[]> = {
  onboarding: onboardingStatuses,
  deposit: depositStatuses,
  withdrawal: withdrawalStatuses,
  biometrics: biometricsStatuses,
};

export const CUSTOMER_VERIFICATION_UPDATED = 'customer.verification_updated';
export const CUSTOMER_IMPEDED = 'customer.impeded';
export const CUSTOMER_CLOSED = 'customer.closed';
export const WEBHOOK_ENDPOINT_DISABLED = 'webhook_endpoint.disabled';
/**
 * A withdrawal still open at its deadline's at-risk mark, or past the deadline
 * (docs/payout-controls.md): not status changes, so each comes once per withdrawal beside them.
 */
export const WITHDRAWAL_DEADLINE_AT_RISK = 'withdrawal.deadline_at_risk';
export const WITHDRAWAL_DEADLINE_MISSED = 'withdrawal.deadline_missed';
/**
 * A completed deposit's money went back to its payer without pixflow asking (a MED return, or
 * any return pixflow did not ask for): once per return, beside the deposit's status, which stays.
 * Its state's `details.reversal` is that return; `details.reversed` every one so far.
 */
export const DEPOSIT_REVERSED = 'deposit.reversed';
export { ALERT_RAISED };

/**
 * Statuses a flow starts in and never records: its first event is the status it moves to (an
 * onboarding's first is `awaiting_liveness`, or `rejected` by its KYC).
 */
const startingStatuses = new Set(['onboarding.kyc', 'deposit.creating', 'biometrics.issuing_link']);

/** Every event type, flow by flow in the order their statuses may pass. */
export const eventTypes: readonly string[] = [
  ...Object.entries(flowStatuses)
    .flatMap(([type, statuses]) => statuses.map((s) => `${type}.${s}`))
    .filter((t) => !startingStatuses.has(t)),
  WITHDRAWAL_DEADLINE_AT_RISK,
  WITHDRAWAL_DEADLINE_MISSED,
  DEPOSIT_REVERSED,
  CUSTOMER_VERIFICATION_UPDATED,
  CUSTOMER_IMPEDED,
  CUSTOMER_CLOSED,
  WEBHOOK_ENDPOINT_DISABLED,
  ALERT_RAISED,
];
const eventTypeSet = new Set(eventTypes);
export const isEventType = (t: string) => eventTypeSet.has(t);

const iso = z.string().meta({ description: 'ISO 8601 time, UTC' });

/** A flow's public state, as GET /v1/flows shows it: the CPF only masked and as a keyed hash. */
export const flowStateSchema = z
  .object({
    workflowId: z.string(),
    type: flowTypeSchema,
    businessId: z.string().meta({
      description: "txid, transactionId, or for a person's flows the keyed hash of their CPF",
    }),
    status: z.string(),
    cpfHash: z.string().nullable().meta({
      description: "keyed hash of the person's CPF: the Temporal UI's PixflowCpfHash search attribute",
    }),
    cpfMasked: z.string().nullable(),
    merchant: z.string().nullable(),
    amountCentavos: z.number().int().nullable(),
    reason: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: 'Flow' });

/** A person's verification after a change, and what it was before. */
const customerStateSchema = z
  .object({
    cpfHash: z.string(),
    cpfMasked: z.string(),
    verification: z.enum(customerVerifications),
    previous: z.enum(customerVerifications),
    at: iso,
    by: z.string().nullable().meta({ description: 'the onboarding that decided it, if one did' }),
    reason: z.string().nullable(),
  })
  .meta({ id: 'CustomerVerificationState' });

/** A person the registry of impeded people names (docs/rules.md, Eligibility): no new deposit is taken. */
const customerImpededStateSchema = z
  .object({
    cpfHash: z.string(),
    cpfMasked: z.string(),
    impeded: z.literal(true),
    reason: z.enum(impededReasons),
    since: iso,
    until: iso.nullable().meta({ description: 'until when the bar holds, when the registry says' }),
    source: z.string().meta({
      description: 'the check that found it: registry:deposit, registry:onboarding, registry:rescreening',
    }),
  })
  .meta({ id: 'CustomerImpededState' });

/** An impeded person an operator closed (docs/rules.md, Eligibility): no deposit until reinstated. */
const customerClosedStateSchema = z
  .object({
    cpfHash: z.string(),
    cpfMasked: z.string(),
    closed: z.literal(true),
    at: iso,
    reason: z.enum(impededReasons).meta({ description: "the registry's reason the person was impeded" }),
  })
  .meta({ id: 'CustomerClosedState' });

/** An endpoint pixflow stopped delivering to, and why. */
const endpointStateSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    reason: z.enum(['gone', 'failing']).meta({
      description: 'gone: it answered 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER_MS',
    }),
    disabledAt: iso,
  })
  .meta({ id: 'WebhookEndpointDisabledState' });

/** A monitoring alert as raised (docs/monitoring.md): it flags, it blocks nothing. */
export const alertStateSchema = z
  .object({
    alertId: z.string().regex(/^alr_[0-9a-f]{32}$/),
    rule: z.enum(alertRules),
    cpfHash: z.string(),
    cpfMasked: z.string().nullable(),
    triggeredBy: z.string().meta({ description: 'the workflow id of the flow whose event tripped the rule' }),
    flowIds: z
      .array(z.string())
      .meta({ description: 'every flow the rule counted, the triggering one included' }),
    facts: z.record(z.string(), z.union([z.number(), z.string()])).meta({
      description: 'the values that tripped it: amounts in centavos, counts, windows in ms, times ISO 8601',
    }),
    raisedAt: iso,
  })
  .meta({ id: 'AlertRaisedState' });
export type AlertState = z.infer<typeof alertStateSchema>;

const streamFields = {
  flowId: z.string().meta({
    description:
      'the workflow id; customer-<keyed CPF hash> for a person, the endpoint id for an endpoint, the alert id for an alert',
  }),
  businessId: z.string().nullable(),
  sequence: z.number().int().positive().meta({
    description: "the event's number in its flow: 1, 2, 3... Sort or drop duplicates by it",
  }),
};

const flowEventDataSchema = z
  .object({ ...streamFields, flowType: flowStateSchema.shape.type, state: flowStateSchema })
  .meta({ id: 'FlowEventData' });
const customerEventDataSchema = z
  .object({
    ...streamFields,
    flowType: z.literal('customer'),
    state: z.union([customerStateSchema, customerImpededStateSchema, customerClosedStateSchema]),
  })
  .meta({ id: 'CustomerEventData' });
const endpointEventDataSchema = z
  .object({ ...streamFields, flowType: z.literal('webhook_endpoint'), state: endpointStateSchema })
  .meta({ id: 'WebhookEndpointEventData' });
const alertEventDataSchema = z
  .object({ ...streamFields, flowType: z.literal('alert'), state: alertStateSchema })
  .meta({ id: 'AlertEventData' });
const eventDataSchema = z.discriminatedUnion('flowType', [
  flowEventDataSchema.extend({ flowType: z.literal('onboarding') }),
  flowEventDataSchema.extend({ flowType: z.literal('deposit') }),
  flowEventDataSchema.extend({ flowType: z.literal('withdrawal') }),
  flowEventDataSchema.extend({ flowType: z.literal('biometrics') }),
  customerEventDataSchema,
  endpointEventDataSchema,
  alertEventDataSchema,
]);

/** What a webhook's body carries (the Standard Webhooks shape); its id is the `webhook-id` header. */
export const webhookBodySchema = z
  .object({
    type: z.string().refine(isEventType, 'not an event type pixflow sends'),
    brand: brandIdSchema.meta({
      description:
        "the brand the event belongs to (docs/brands.md): a flow's, its flow's brand; an alert's, the brand of the flow that raised it; a person's (customer.*), `default`; an endpoint's, the endpoint's brand",
    }),
    timestamp: iso,
    data: eventDataSchema,
  })
  .meta({ id: 'WebhookBody' });
export type WebhookBody = z.infer<typeof webhookBodySchema>;

/** One event, as GET /v1/events lists it: the webhook's body with its id. */
export const eventSchema = webhookBodySchema.extend({ id: z.string().regex(/^evt_[0-9a-f]{32}$/) });
export type PixflowEvent = z.infer<typeof eventSchema>;
