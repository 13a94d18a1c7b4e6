import type { Client } from '@temporalio/client';
import { Router } from 'express';
import { z } from 'zod';
import { maskName } from '../common/mask';
import { cpfHash } from '../common/pii';
import { type DepositState, depositStateQuery, RETURNED_BY_RULES } from '../contracts/deposit';
import { type OnboardingState, onboardingStateQuery } from '../contracts/onboarding';
import { IMPEDED_PREFIX } from '../contracts/reasons';
import { depositLimitsView } from '../customers/deposit-limits';
import { payoutsTodayView } from '../customers/payouts-today';
import { listAlerts } from '../db/alerts';
import { flowsOfPerson, getFlowRow, type QueueItem } from '../db/backoffice-queues';
import { getCustomer, kycIdentity, listAccounts } from '../db/customers';
import type { EligibilityRecord } from '../db/eligibility';
import { eligibilityOfHash } from '../db/eligibility';
import type { EventRow } from '../db/events';
import { CUSTOMER_CLOSED, CUSTOMER_IMPEDED, timelineOf } from '../db/events';
import { getWithdrawalReceipt } from '../db/flows';
import { listActions } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import type { Pool } from '../db/pool';
import type { ImpededReason } from '../eligibility/contract';
import { flowState, isNotFound } from '../starters/workflow-calls';
import { returnableDepositsOf } from './customer-decisions';
import { connectorInRow, connectorOf, returnChoiceOf, returnFacts, returnOf } from './deposit-returns';
import type { BackofficeDeps } from './deps';
import { type Formatter, formatterFor } from './format';
import { parseForm, typedCpfSchema } from './forms';
import { type Catalog, type Label, labelsFor } from './i18n';
import { brandsFor, mustSeeFlow } from './operators';
import { payoutCaseOf } from './payouts';
import { isQueueId } from './queues';
import { notFoundPage, page, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// Case pages: one flow, or one person, with what an operator needs to decide and what already
// happened. Decisions are posted from here (decisions.ts).

/** Which decision a flow in this state waits for, if any. */
function openDecision(flow: QueueItem, live: OnboardingState | DepositState | undefined, t: Catalog) {
  if (
    flow.type === 'onboarding' &&
    flow.status === 'awaiting_review' &&
    !(live as OnboardingState | undefined)?.review
  )
    return {
      action: 'review',
      question: t.flow.reviewQuestion,
      choices: [
        ['approve', t.flow.approveChoice],
        ['refuse', t.flow.refuseChoice],
      ],
    };
  if (flow.type === 'deposit' && flow.status === 'held' && !(live as DepositState | undefined)?.resolution)
    return {
      action: 'resolution',
      question: t.flow.resolutionQuestion,
      choices: [
        ['accept', t.flow.acceptChoice],
        ['return', returnChoiceOf(connectorOf(flow, live as DepositState | undefined), t)],
      ],
    };
  return undefined;
}

/**
 * Who paid a deposit, as far as pixflow knows them. Someone other than the customer is named by
 * their masked CPF alone: beside another person's CPF, a provider may give the customer's own
 * name (the payer's bank sends no name), and its initials would pass the customer off as the payer.
 */
export function payerOf(payment: NonNullable<DepositState['payment']>): string {
  return [payment.payerName ? maskName(payment.payerName) : undefined, payment.payerCpfMasked]
    .filter(Boolean)
    .join(', ');
}

/** The facts a flow's page lists beyond its amount and dates. */
function factsOf(
  flow: QueueItem,
  live: OnboardingState | DepositState | undefined,
  t: Catalog,
  label: Label,
  fmt: Formatter,
): Array<[string, string]> {
  const f = t.flow;
  const decided = (d: { decision: string; by: string; reason: string; policyVersion?: number }) =>
    // An API caller may name itself anything: the rules' own decision carries their version.
    d.by === RETURNED_BY_RULES && d.policyVersion !== undefined
      ? f.decidedByRules(label.decision(d.decision), d.policyVersion)
      : f.decidedBy(label.decision(d.decision), d.by, d.reason);
  const facts: Array<[string, string]> = [[f.id[flow.type], flow.businessId]];
  if (flow.type === 'deposit' || flow.type === 'withdrawal') facts.push([t.grants.brand, flow.brandId]);
  if (flow.type === 'onboarding') {
    const o = live as OnboardingState | undefined;
    facts.push([f.kyc, label.registryStatus(flow.kycStatus)], [f.pep, label.yesNo(flow.pep ?? o?.flags.pep)]);
    const liveness = o?.livenessStatus ?? flow.details.livenessStatus;
    facts.push([f.liveness, typeof liveness === 'string' ? label.liveness(liveness) : f.noLivenessYet]);
    if (o?.reasons.length) facts.push([f.reasons, o.reasons.map(label.reason).join('; ')]);
    if (o?.review) facts.push([f.review, decided(o.review)]);
  } else if (flow.type === 'deposit') {
    const d = live as DepositState | undefined;
    if (flow.merchant) facts.push([f.merchant, flow.merchant]);
    if (d?.payment) {
      facts.push([f.paidBy, payerOf(d.payment) || t.unknown]);
      facts.push([f.payerIsCustomer, label.yesNo(d.payment.payerIsClient)]);
    }
    if (d?.resolution) facts.push([f.resolution, decided(d.resolution)]);
    const connector = d?.connector ?? connectorInRow(flow);
    if (connector) facts.push([f.connector, connector]);
    facts.push(...returnFacts(returnOf(flow, d), t, fmt));
  }
  const e2eId = flow.details.e2eId;
  if (typeof e2eId === 'string' && e2eId) facts.push([f.e2eId, e2eId]);
  if (flow.reason) facts.push([f.reason, label.reason(flow.reason)]);
  return facts;
}

/** A version of the rules policy, as a flows row or a flow's state keeps it. */
const policyVersionSchema = z.number().int().min(1);

/**
 * The rules' version a deposit or withdrawal was decided under: the one that refused it, that
 * held it (a hold is the rules' latest word on a deposit), else the one it was screened under.
 * The flow's own state first, then its row; none for flows from before versions were kept.
 */
function policyOf(
  flow: QueueItem,
  live: OnboardingState | DepositState | undefined,
  t: Catalog,
  admin: boolean,
) {
  if (flow.type !== 'deposit' && flow.type !== 'withdrawal') return undefined;
  const fromState = flow.type === 'deposit' ? (live as DepositState | undefined)?.policyVersion : undefined;
  const version = policyVersionSchema.safeParse(fromState ?? flow.details.policyVersion);
  if (!version.success) return undefined;
  const under = flow.status === 'refused' ? 'refused' : flow.status === 'held' ? 'held' : 'decided';
  return {
    label: t.flow.policyUnder[under],
    words: t.flow.policyVersion(version.data),
    // Only an admin opens the policy page; anyone else reads the number.
    href: admin ? `/backoffice/policy?version=${version.data}#version-${version.data}` : undefined,
  };
}

const timelineEntries = (events: EventRow[], label: Label) =>
  events.map((e) => {
    const state = (e.data as { state?: { reason?: string | null; verification?: string } }).state;
    // The registry's reasons are the family `impeded_<reason>` as a flow writes them.
    const impeded = e.type === CUSTOMER_IMPEDED || e.type === CUSTOMER_CLOSED;
    const note = state?.reason
      ? label.reason(impeded ? `${IMPEDED_PREFIX}${state.reason}` : state.reason)
      : state?.verification
        ? label.verification(state.verification)
        : undefined;
    return {
      id: e.id,
      stream: e.data.flowId,
      at: e.timestamp,
      type: e.type,
      what: label.event(e.type),
      note,
    };
  });

/** The CPF as this operator may see it: whole for an admin, when pixflow read it from the registry. */
async function cpfFor(pool: Pool, operator: Operator, hash: string, masked: string | null, t: Catalog) {
  if (!roleAtLeast(operator.role, 'admin')) return masked ?? t.unknown;
  return (await kycIdentity(pool, hash))?.cpf ?? masked ?? t.unknown;
}

/** How many of a person's alerts a case page lists: the newest; the alerts queue has them all. */
const PERSON_ALERTS = 20;

/** A person's monitoring alerts raised by flows of these brands, newest first, for their page and their payouts' pages. */
const personAlertsOf = (pool: Pool, hash: string, brands: string[] | null) =>
  listAlerts(pool, { cpfHash: hash, order: 'newest', limit: PERSON_ALERTS, brands });

/** The flow's own state, from its workflow (running or finished): what the flows row does not keep. */
async function liveStateOf(
  temporal: Client,
  flow: QueueItem,
): Promise<OnboardingState | DepositState | undefined> {
  const handle = temporal.workflow.getHandle(flow.workflowId);
  try {
    if (flow.type === 'onboarding') return await flowState(handle, onboardingStateQuery);
    if (flow.type === 'deposit') return await flowState(handle, depositStateQuery);
    return undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function caseRoutes(deps: BackofficeDeps) {
  const r = Router();
  flowPage(r, deps);
  receiptPage(r, deps);
  customerPages(r, deps);
  return r;
}

function flowPage(r: Router, { pool, temporal, config }: BackofficeDeps) {
  r.get('/flows/:id', async (req, res) => {
    const operator = signedIn(res);
    const t = wordsOf(req, res);
    const label = labelsFor(t.lang);
    const flow = mustSeeFlow(res, await getFlowRow(pool, req.params.id ?? ''));
    if (!flow) throw notFoundPage((w) => w.errors.what.flow);
    const live = await liveStateOf(temporal, flow);
    const from = typeof req.query.from === 'string' && isQueueId(req.query.from) ? req.query.from : undefined;
    const fmt = formatterFor(operator.timeZone, t.lang);
    const payout = flow.type === 'withdrawal' ? payoutCaseOf(flow, operator, t, fmt) : undefined;
    const receipt =
      flow.type === 'withdrawal' ? await getWithdrawalReceipt(pool, flow.workflowId) : undefined;
    page(req, res, 'flow', {
      heading: `${label.flowType(flow.type)} ${flow.businessId}`,
      receipt: receipt && { paidAt: receipt.paidAt },
      flow,
      queue: from,
      cpfShown: flow.cpfHash ? await cpfFor(pool, operator, flow.cpfHash, flow.cpfMasked, t) : '—',
      facts: [...factsOf(flow, live, t, label, fmt), ...(payout?.facts ?? [])],
      policy: policyOf(flow, live, t, roleAtLeast(operator.role, 'admin')),
      decision: openDecision(flow, live, t),
      payout,
      // A payout's approvers decide with the person's alerts in view.
      personAlerts:
        flow.type === 'withdrawal' && flow.cpfHash
          ? await personAlertsOf(pool, flow.cpfHash, brandsFor(res))
          : undefined,
      mayDecide: roleAtLeast(operator.role, 'reviewer'),
      temporalUrl: `${config.TEMPORAL_UI_URL}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(flow.workflowId)}`,
      timeline: timelineEntries(await timelineOf(pool, [flow.workflowId], 500, brandsFor(res)), label),
      actions: await listActions(pool, {
        caseIds: [flow.workflowId],
        order: 'newest',
        limit: 200,
        brands: brandsFor(res),
      }),
    });
  });
}

/** A payout's stored receipt, as the API serves it to backends, for operators signed in. */
function receiptPage(r: Router, { pool }: BackofficeDeps) {
  r.get('/flows/:id/receipt.png', async (req, res) => {
    const flow = mustSeeFlow(res, await getFlowRow(pool, req.params.id ?? ''));
    const receipt =
      flow?.type === 'withdrawal' ? await getWithdrawalReceipt(pool, flow.workflowId) : undefined;
    if (!receipt) throw notFoundPage((w) => w.errors.what.receipt);
    res.type(receipt.contentType).set('cache-control', 'private, no-store').send(receipt.image);
  });
}

function customerPages(r: Router, { pool, config, policy }: BackofficeDeps) {
  r.get('/customers', (req, res) => {
    const { cpf } = parseForm(z.object({ cpf: typedCpfSchema }), req.query, '/backoffice', wordsOf(req, res));
    res.redirect(303, `/backoffice/customers/${cpfHash(cpf, config.PII_HASH_KEY)}`);
  });

  r.get('/customers/:hash', async (req, res) => {
    const operator = signedIn(res);
    const hash = req.params.hash ?? '';
    // A person is every brand's; their flows on the page are the operator's brands' alone.
    const brands = brandsFor(res);
    const [customer, flows] = await Promise.all([getCustomer(pool, hash), flowsOfPerson(pool, hash, brands)]);
    if (!customer && flows.length === 0) throw notFoundPage((t) => t.errors.what.customer);
    const cases = [`customer-${hash}`, ...flows.map((f) => f.workflowId)];
    const rules = (await policy.current()).policy;
    const [identity, limits, depositLimits, accounts, timeline, actions, eligibility, personAlerts] =
      await Promise.all([
        kycIdentity(pool, hash),
        payoutsTodayView(pool, rules.withdrawals.dailyLimitCentavos, hash, new Date()),
        depositLimitsView(pool, hash, new Date()),
        listAccounts(pool, hash),
        timelineOf(pool, cases, 500, brands),
        listActions(pool, { caseIds: cases, order: 'newest', limit: 200, brands }),
        eligibilityOfHash(pool, hash),
        personAlertsOf(pool, hash, brands),
      ]);
    const t = wordsOf(req, res);
    const label = labelsFor(t.lang);
    const c = t.customer;
    const admin = roleAtLeast(operator.role, 'admin');
    const masked = customer?.cpfMasked ?? flows[0]?.cpfMasked ?? t.unknown;
    const kyc = customer?.kyc;
    const fmt = formatterFor(operator.timeZone, t.lang);
    // A closed account's deposits still returnable are offered to go back to their payers.
    const returnable = eligibility?.closed ? await returnableDepositsOf(pool, hash, brands) : undefined;
    page(req, res, 'customer', {
      cpfShown: (admin && identity?.cpf) || masked,
      customer: customer ?? { verification: 'none', verificationAt: null, lastBiometric: null },
      kycFacts: [
        [c.name, identity?.name ? (admin ? identity.name : maskName(identity.name)) : t.unknown],
        [c.registry, kyc?.readAt ? label.registryStatus(kyc.status) : c.notRead],
        [c.pep, label.yesNo(kyc?.pep)],
        [c.under18, label.yesNo(kyc?.under18)],
        [c.deceased, label.yesNo(kyc?.deceased)],
        [c.restricted, label.yesNo(kyc?.restricted)],
        [c.read, kyc?.readAt ? fmt.time(kyc.readAt) : t.never],
        ...(customer?.suspension
          ? [
              [
                c.suspended,
                `${label.reason(customer.suspension.reason)}, ${fmt.time(customer.suspension.at)}`,
              ],
            ]
          : []),
      ],
      limits,
      depositLimits,
      accounts,
      personAlerts,
      flows,
      timeline: timelineEntries(timeline, label),
      actions,
      hash,
      impeded: impededOf(eligibility, rules.eligibility.impededCloseWithinMs, t, fmt),
      returnable,
      mayDecide: roleAtLeast(operator.role, 'reviewer'),
    });
  });
}

/** What the customer page says of a recorded impediment, and which decision it waits for. */
function impededOf(
  e: EligibilityRecord | undefined,
  closeWithinMs: number,
  t: Catalog,
  fmt: ReturnType<typeof formatterFor>,
) {
  if (!e?.impeded) return undefined;
  const w = t.impeded;
  const closeBy = new Date(Date.parse(e.impeded.since) + closeWithinMs).toISOString();
  const late = Date.parse(closeBy) <= Date.now();
  const facts: Array<[string, string]> = [
    [w.reason, t.impededReason[e.impeded.reason as ImpededReason] ?? e.impeded.reason],
    [w.since, fmt.time(e.impeded.since)],
    [w.until, e.impeded.until ? fmt.time(e.impeded.until) : w.noEnd],
    [w.source, w.source_[e.impeded.source] ?? e.impeded.source],
    [w.registryNow, w.registryAnswer[e.registryAnswer] ?? e.registryAnswer],
  ];
  if (e.closed) facts.push([w.closed, w.closedBy(fmt.time(e.closed.at), e.closed.by, e.closed.reason)]);
  else
    facts.push([
      w.closeBy,
      `${fmt.time(closeBy)} (${late ? w.overdue(fmt.age(closeBy)) : w.left(fmt.left(closeBy))})`,
    ]);
  // Closing while open; reinstating is offered throughout and refused while the registry still bars.
  return { facts, closed: Boolean(e.closed) };
}
