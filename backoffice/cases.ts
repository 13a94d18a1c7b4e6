import type { Client } from '@temporalio/client';
import { Router } from 'express';
import { z } from 'zod';
import { maskName } from '../common/mask';
import { cpfHash } from '../common/pii';
import { type DepositState, depositStateQuery } from '../contracts/deposit';
import { type OnboardingState, onboardingStateQuery } from '../contracts/onboarding';
import { depositLimitsView } from '../customers/deposit-limits';
import { payoutsTodayView } from '../customers/payouts-today';
import { flowsOfPerson, getFlowRow, type QueueItem } from '../db/backoffice-queues';
import { getCustomer, kycIdentity, listAccounts } from '../db/customers';
import type { EventRow } from '../db/events';
import { timelineOf } from '../db/events';
import { listActions } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import type { Pool } from '../db/pool';
import { flowState, isNotFound } from '../http/workflow-calls';
import type { BackofficeDeps } from './deps';
import { formatterFor } from './format';
import { parseForm, typedCpfSchema } from './forms';
import { isQueueId, queueTitles } from './queues';
import { notFoundPage, page, signedIn } from './render';
import { roleAtLeast } from './session';

// Case pages: one flow, or one person, with what an operator needs to decide and what already
// happened. Decisions are posted from here (decisions.ts).

const yesNo = (v: boolean | null | undefined) =>
  v === null || v === undefined ? 'unknown' : v ? 'yes' : 'no';

/** Which decision a flow in this state waits for, if any. */
function openDecision(flow: QueueItem, live: OnboardingState | DepositState | undefined) {
  if (
    flow.type === 'onboarding' &&
    flow.status === 'awaiting_review' &&
    !(live as OnboardingState | undefined)?.review
  )
    return {
      action: 'review',
      question: 'Approve this person?',
      choices: [
        ['approve', 'Approve: they may move money'],
        ['refuse', 'Refuse: the onboarding is rejected'],
      ],
    };
  if (flow.type === 'deposit' && flow.status === 'held' && !(live as DepositState | undefined)?.resolution)
    return {
      action: 'resolution',
      question: 'Credit this deposit?',
      choices: [
        ['accept', 'Accept: credit the customer'],
        ['return', 'Return: send the money back to the payer'],
      ],
    };
  return undefined;
}

/** The facts a flow's page lists beyond its amount and dates. */
function factsOf(flow: QueueItem, live: OnboardingState | DepositState | undefined): Array<[string, string]> {
  const facts: Array<[string, string]> = [['Business id', flow.businessId]];
  if (flow.type === 'onboarding') {
    const o = live as OnboardingState | undefined;
    facts.push(['KYC status', flow.kycStatus ?? 'unknown'], ['PEP', yesNo(flow.pep ?? o?.flags.pep)]);
    facts.push(['Liveness', o?.livenessStatus ?? String(flow.details.livenessStatus ?? 'no answer yet')]);
    if (o?.reasons.length) facts.push(['Reasons', o.reasons.join(', ')]);
    if (o?.review) facts.push(['Review', `${o.review.decision} by ${o.review.by}: ${o.review.reason}`]);
  } else if (flow.type === 'deposit') {
    const d = live as DepositState | undefined;
    if (flow.merchant) facts.push(['Merchant', flow.merchant]);
    if (d?.payment) {
      facts.push([
        'Paid by',
        [d.payment.payerName ? maskName(d.payment.payerName) : undefined, d.payment.payerCpfMasked]
          .filter(Boolean)
          .join(', ') || 'unknown',
      ]);
      facts.push(
        ['Payer is the customer', yesNo(d.payment.payerIsClient)],
        ['End-to-end id', d.payment.e2eId],
      );
    }
    if (d?.resolution)
      facts.push(['Resolution', `${d.resolution.decision} by ${d.resolution.by}: ${d.resolution.reason}`]);
  }
  if (flow.reason) facts.push(['Reason', flow.reason]);
  return facts;
}

const timelineEntries = (events: EventRow[]) =>
  events.map((e) => {
    const state = (e.data as { state?: { reason?: string | null; verification?: string } }).state;
    return { at: e.timestamp, what: e.type, note: state?.reason ?? state?.verification ?? undefined };
  });

/** The CPF as this operator may see it: whole for an admin, when pixflow read it from the registry. */
async function cpfFor(pool: Pool, operator: Operator, hash: string, masked: string | null) {
  if (!roleAtLeast(operator.role, 'admin')) return masked ?? 'unknown';
  return (await kycIdentity(pool, hash))?.cpf ?? masked ?? 'unknown';
}

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
  customerPages(r, deps);
  return r;
}

function flowPage(r: Router, { pool, temporal, config }: BackofficeDeps) {
  r.get('/flows/:id', async (req, res) => {
    const operator = signedIn(res);
    const flow = await getFlowRow(pool, req.params.id ?? '');
    if (!flow) throw notFoundPage('flow with this id');
    const live = await liveStateOf(temporal, flow);
    const from = typeof req.query.from === 'string' && isQueueId(req.query.from) ? req.query.from : undefined;
    page(req, res, 'flow', {
      heading: `${flow.type[0]?.toUpperCase()}${flow.type.slice(1)} ${flow.businessId}`,
      flow,
      queue: from ? { id: from, title: queueTitles[from] } : undefined,
      cpfShown: flow.cpfHash ? await cpfFor(pool, operator, flow.cpfHash, flow.cpfMasked) : '—',
      facts: factsOf(flow, live),
      decision: openDecision(flow, live),
      mayDecide: roleAtLeast(operator.role, 'reviewer'),
      temporalUrl: `${config.TEMPORAL_UI_URL}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(flow.workflowId)}`,
      timeline: timelineEntries(await timelineOf(pool, [flow.workflowId])),
      actions: await listActions(pool, { caseIds: [flow.workflowId], order: 'newest', limit: 200 }),
    });
  });
}

function customerPages(r: Router, { pool, config }: BackofficeDeps) {
  r.get('/customers', (req, res) => {
    const { cpf } = parseForm(z.object({ cpf: typedCpfSchema }), req.query, '/backoffice');
    res.redirect(303, `/backoffice/customers/${cpfHash(cpf, config.PII_HASH_KEY)}`);
  });

  r.get('/customers/:hash', async (req, res) => {
    const operator = signedIn(res);
    const hash = req.params.hash ?? '';
    const [customer, flows] = await Promise.all([getCustomer(pool, hash), flowsOfPerson(pool, hash)]);
    if (!customer && flows.length === 0) throw notFoundPage('customer with this CPF');
    const cases = [`customer-${hash}`, ...flows.map((f) => f.workflowId)];
    const [identity, limits, depositLimits, accounts, timeline, actions] = await Promise.all([
      kycIdentity(pool, hash),
      payoutsTodayView(pool, config.WITHDRAWAL_DAILY_LIMIT_CENTAVOS, hash, new Date()),
      depositLimitsView(pool, hash, new Date()),
      listAccounts(pool, hash),
      timelineOf(pool, cases),
      listActions(pool, { caseIds: cases, order: 'newest', limit: 200 }),
    ]);
    const admin = roleAtLeast(operator.role, 'admin');
    const masked = customer?.cpfMasked ?? flows[0]?.cpfMasked ?? 'unknown';
    const kyc = customer?.kyc;
    const fmt = formatterFor(operator.timeZone);
    page(req, res, 'customer', {
      cpfShown: (admin && identity?.cpf) || masked,
      customer: customer ?? { verification: 'none', verificationAt: null, lastBiometric: null },
      kycFacts: [
        ['Name', identity?.name ? (admin ? identity.name : maskName(identity.name)) : 'unknown'],
        ['Registry status', kyc?.status ?? 'not read'],
        ['PEP', yesNo(kyc?.pep)],
        ['Under 18', yesNo(kyc?.under18)],
        ['Deceased', yesNo(kyc?.deceased)],
        ['On a restricted list', yesNo(kyc?.restricted)],
        ['Read', kyc?.readAt ? fmt.time(kyc.readAt) : 'never'],
        ...(customer?.suspension
          ? [['Suspended', `${customer.suspension.reason}, ${fmt.time(customer.suspension.at)}`]]
          : []),
      ],
      limits,
      depositLimits,
      accounts,
      flows,
      timeline: timelineEntries(timeline),
      actions,
    });
  });
}
