import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../common/config';
import { cpfHash } from '../../common/pii';
import { openSecret } from '../../common/secret-box';
import { depositWorkflowId } from '../../contracts/deposit';
import { CUSTOMER_IMPEDED, eventSchema } from '../../contracts/events';
import { patchMarkers, recordHistory } from '../helpers/histories';
import { expectActivityFailure } from '../helpers/sdk-log';
import { testCodecKeys } from '../helpers/temporal';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  onboardApproved,
  PII_KEY,
  startApiEnv,
} from './support';

// The registry of impeded people in front of every new deposit (docs/rules.md, Eligibility): the
// real API, worker, Temporal and Postgres, asking the sandbox's emulation over signed HTTP.

let e: ApiEnv;
let n = 0;
/** Approved, so only the registry can refuse their deposit. */
const ANA = freshCpf();
const FRESH_MS = 1_500;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

beforeAll(async () => {
  // Reconciliation every second: a settled withdrawal completes without a webhook.
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    { eligibility: true, eventsRelay: {}, env: { ELIGIBILITY_FRESH_MS: String(FRESH_MS) } },
  );
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  await onboardApproved(e, ANA);
});
afterAll(async () => {
  await e?.close();
});

const txid = () => `${Date.now()}${String(++n).padStart(4, '0')}`.padEnd(32, '7');
const depositBody = (over: Record<string, unknown> = {}) => ({
  txid: txid(),
  client: { externalId: `user-${n}`, cpf: ANA, email: 'ana@example.com', name: 'Ana Souza' },
  amountCentavos: 15_000,
  ...over,
});
const checksAsked = async () =>
  ((await (await fetch(`${e.sandbox.url}/sandbox/eligibility`)).json()) as { checks: number }).checks;
/** Past the reuse of the last answer: the next deposit asks the registry again. */
const stale = () => new Promise((r) => setTimeout(r, FRESH_MS + 100));
const setStatus = (status: string, reason?: string) =>
  e.sandboxControl('/sandbox/eligibility/status', { cpf: ANA, status, ...(reason ? { reason } : {}) });
/** The person's `customer.impeded` events, as GET /v1/events answers them (validated by its schema). */
const impededEvents = async () => {
  const flow = `customer-${cpfHash(ANA, PII_KEY)}`;
  const res = await e.call('GET', `/v1/events?type=${CUSTOMER_IMPEDED}&flow=${flow}`);
  expect(res.status).toBe(200);
  return z.object({ items: z.array(eventSchema) }).parse(await res.json()).items;
};

let eligibleDeposit: ReturnType<typeof depositBody>;

describe('eligibility before a deposit', () => {
  it('takes an eligible person’s deposit, and reuses the fresh answer for the next', async () => {
    // Past the answer the person's onboarding got.
    await stale();
    const before = await checksAsked();
    eligibleDeposit = depositBody();
    expect((await e.call('POST', '/v1/deposits', { body: eligibleDeposit })).status).toBe(201);
    expect(await checksAsked()).toBe(before + 1);
    expect((await e.call('POST', '/v1/deposits', { body: depositBody() })).status).toBe(201);
    expect(await checksAsked()).toBe(before + 1);
  });

  it('refuses an impeded person’s new deposit in its flow (409 impeded), creates nothing at the provider, records and tells it once', async () => {
    await setStatus('impeded', 'court_order');
    await stale();
    const body = depositBody();
    const p = await expectProblem(await e.call('POST', '/v1/deposits', { body }), 409, 'impeded');
    expect(p).toMatchObject({
      reason: 'impeded',
      impeded: { reason: 'court_order', until: null },
      policyVersion: 1,
      workflowId: depositWorkflowId(body.txid),
    });
    // The flow keeps the refusal; the provider never heard of the deposit (it has no QR).
    const refused = await json(await e.call('GET', `/v1/deposits/${body.txid}`));
    expect(refused.state).toMatchObject({ status: 'refused', reason: 'impeded', policyVersion: 1 });
    expect(refused.state.qr).toBeUndefined();

    // The customer read model records it, by keyed hash and masked CPF only.
    const { rows } = await e.pool.query('SELECT * FROM customers WHERE cpf_hash = $1', [
      cpfHash(ANA, PII_KEY),
    ]);
    expect(rows[0]).toMatchObject({
      eligibility: 'impeded',
      impeded_reason: 'court_order',
      impeded_source: 'registry:deposit',
    });
    expect(JSON.stringify(rows[0])).not.toContain(ANA);
    // Sealed with the codec keys, for the rescreening to ask about the person again.
    expect(openSecret(testCodecKeys, rows[0].cpf_sealed)).toBe(ANA);

    // Asked again (stale), still impeded: refused again, and no second event. The event is
    // written with the answer, before the 409: the events table holds all there will be.
    await stale();
    await expectProblem(await e.call('POST', '/v1/deposits', { body: depositBody() }), 409, 'impeded');
    const written = await e.pool.query(
      'SELECT count(*)::int AS n FROM events WHERE type = $1 AND business_id = $2',
      [CUSTOMER_IMPEDED, cpfHash(ANA, PII_KEY)],
    );
    expect(written.rows[0].n).toBe(1);
    // The events relay positions it for the pull API.
    const events = await eventually(impededEvents, (list) => list.length > 0);
    expect(events).toHaveLength(1);
    expect(events[0]?.data.flowType).toBe('customer');
    expect(events[0]?.data.state).toMatchObject({
      impeded: true,
      reason: 'court_order',
      source: 'registry:deposit',
      cpfHash: cpfHash(ANA, PII_KEY),
    });
    expect(JSON.stringify(events[0])).not.toContain(ANA);

    // A repeat of a deposit that exists is answered as before.
    expect((await e.call('POST', '/v1/deposits', { body: eligibleDeposit })).status).toBe(200);

    // The person's view says so.
    const view = await json<{ impeded: { since: string } }>(await e.call('GET', `/v1/customers/${ANA}`));
    expect(view).toMatchObject({
      eligibility: 'impeded',
      impeded: { reason: 'court_order', until: null, source: 'registry:deposit', registryAnswer: 'impeded' },
      closedAt: null,
    });
    expect(Date.parse(view.impeded.since)).not.toBeNaN();
  });

  it('still pays an impeded person’s withdrawal to their own account', async () => {
    const body = {
      transactionId: `elig-wd-${Date.now()}`,
      client: { externalId: 'user-wd', cpf: ANA, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: ANA,
      pixType: 'CPF',
      amountCentavos: 10_000,
    };
    expect((await e.call('POST', '/v1/withdrawals', { body })).status).toBe(202);
    const path = `/v1/withdrawals/${body.transactionId}`;
    await eventually(
      async () => (await json(await e.call('GET', path))).state.status,
      (s) => s === 'processing',
    );
    await e.sandboxControl(`/sandbox/withdrawals/${body.transactionId}/settle`);
    await eventually(
      async () => (await json(await e.call('GET', path))).state.status,
      (s) => s === 'completed',
    );
    // And a new deposit is still refused.
    await expectProblem(await e.call('POST', '/v1/deposits', { body: depositBody() }), 409, 'impeded');
  });

  it('still credits a deposit opened before the impediment once the person pays it', async () => {
    // Opened while the person was eligible, still waiting for payment: what is paid is credited.
    const path = `/v1/deposits/${eligibleDeposit.txid}`;
    expect((await json(await e.call('GET', path))).state.status).toBe('awaiting_payment');
    await e.sandboxControl(`/sandbox/deposits/${eligibleDeposit.txid}/pay`);
    await eventually(
      async () => (await json(await e.call('GET', path))).state.status,
      (s) => s === 'completed',
    );
  });

  it('keeps asking while the registry is down (fail closed): the caller gets 503 with Retry-After, the same request its answer once the registry is back; an eligible answer does not lift the impediment', async () => {
    await setStatus('eligible');
    await e.sandboxControl('/sandbox/eligibility/outage', { mode: 'error' });
    await stale();
    const body = depositBody();
    // The screening's tries while the registry is down, each a warning of the worker's.
    const tries = expectActivityFailure({
      workflowId: depositWorkflowId(body.txid),
      activityType: 'screenDeposit',
      error: /registry of impeded people did not answer/,
    });
    const down = await e.call('POST', '/v1/deposits', { body });
    // The flow goes on asking past the API's wait (TEMPORAL_CALL_TIMEOUT_MS).
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectProblem(down, 503, 'unavailable');

    await e.sandboxControl('/sandbox/eligibility/outage', { mode: 'none' });
    // Eligible again at the registry: recorded as its latest answer, but the impediment stays
    // until an operator reinstates the person (the back office's test does). The same request
    // again attaches to the flow and gets its answer once the screening has asked again.
    const again = await eventually(
      () => e.call('POST', '/v1/deposits', { body }),
      (res) => res.status !== 503,
      { timeoutMs: 40_000 },
    );
    expect(await expectProblem(again, 409, 'impeded')).toMatchObject({ reason: 'impeded', policyVersion: 1 });
    expect(tries().length).toBeGreaterThan(1);
    const { rows } = await e.pool.query(
      'SELECT eligibility, registry_answer, impeded_reason FROM customers WHERE cpf_hash = $1',
      [cpfHash(ANA, PII_KEY)],
    );
    expect(rows[0]).toEqual({
      eligibility: 'impeded',
      registry_answer: 'eligible',
      impeded_reason: 'court_order',
    });
    expect(await json(await e.call('GET', `/v1/customers/${ANA}`))).toMatchObject({
      eligibility: 'impeded',
      impeded: { reason: 'court_order', registryAnswer: 'eligible' },
    });
    // Reused while fresh, still impeded; no second `customer.impeded`.
    await expectProblem(await e.call('POST', '/v1/deposits', { body: depositBody() }), 409, 'impeded');
    expect(await impededEvents()).toHaveLength(1);
  });
});

describe('eligibility at onboarding', () => {
  it('rejects a person the registry names, with the reason, before any liveness link; records and tells it', async () => {
    const cpf = '74436147134'; // the emulation's social_benefit test CPF
    const res = await e.call('POST', '/v1/onboardings', {
      body: { cpf, plan: 'plan_basic', event: 'signup', userRef: 'u-impeded' },
    });
    expect(res.status).toBe(201);
    const { workflowId } = (await res.json()) as { workflowId: string };
    const state = await eventually(
      async () => (await json(await e.call('GET', `/v1/onboardings/${cpf}`))).state,
      (s) => s.status === 'rejected',
    );
    expect(state).toMatchObject({ status: 'rejected', reasons: ['impeded_social_benefit'] });
    expect(state.link).toBeUndefined();
    // The check is behind its patch (the onboarding auto-upgrades); the run is a replay fixture.
    const handle = e.temporal.workflow.getHandle(workflowId);
    await handle.result();
    expect((await patchMarkers(handle)).join()).toContain('eligibility-check');
    await recordHistory(handle, 'onboarding-impeded-rejected');
    const hash = cpfHash(cpf, PII_KEY);
    const { rows } = await e.pool.query(
      'SELECT eligibility, impeded_reason, impeded_source, verification FROM customers WHERE cpf_hash = $1',
      [hash],
    );
    expect(rows[0]).toMatchObject({
      eligibility: 'impeded',
      impeded_reason: 'social_benefit',
      impeded_source: 'registry:onboarding',
      verification: 'rejected',
    });
    const flow = `customer-${hash}`;
    await eventually(
      async () =>
        z
          .object({ items: z.array(eventSchema) })
          .parse(await (await e.call('GET', `/v1/events?type=${CUSTOMER_IMPEDED}&flow=${flow}`)).json())
          .items,
      (items) =>
        items.length === 1 &&
        (items[0]?.data.state as { reason?: string } | undefined)?.reason === 'social_benefit',
    );
  });

  it('onboards an eligible person as before (the check asked, then the liveness link)', async () => {
    const before = await checksAsked();
    const cpf = freshCpf();
    expect(
      (
        await e.call('POST', '/v1/onboardings', {
          body: { cpf, plan: 'plan_basic', event: 'signup', userRef: 'u-2' },
        })
      ).status,
    ).toBe(201);
    await eventually(
      async () => (await json(await e.call('GET', `/v1/onboardings/${cpf}`))).state.status,
      (s) => s === 'awaiting_liveness',
    );
    expect(await checksAsked()).toBe(before + 1);
  });
});

describe('eligibility failing open (ELIGIBILITY_FAIL_CLOSED=false)', () => {
  let open: ApiEnv;
  beforeAll(async () => {
    // Verification off: only the registry could refuse this deposit.
    open = await startApiEnv(
      {},
      {
        eligibility: true,
        env: { ELIGIBILITY_FAIL_CLOSED: 'false', REQUIRE_VERIFIED_FOR_DEPOSITS: 'false' },
      },
    );
  });
  afterAll(async () => {
    await open?.close();
  });

  it('takes a deposit unscreened while the registry is down, and still refuses an impeded person', async () => {
    await open.sandboxControl('/sandbox/eligibility/outage', { mode: 'error' });
    const cpf = freshCpf();
    const body = { ...depositBody(), client: { ...depositBody().client, cpf } };
    expect((await open.call('POST', '/v1/deposits', { body })).status).toBe(201);
    await open.sandboxControl('/sandbox/eligibility/outage', { mode: 'none' });
    const impededBody = { ...depositBody(), client: { ...depositBody().client, cpf: '12684627304' } };
    await expectProblem(await open.call('POST', '/v1/deposits', { body: impededBody }), 409, 'impeded');
  });
});
