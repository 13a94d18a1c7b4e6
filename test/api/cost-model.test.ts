import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEASURED_ROWS } from '../../bench/cost-model';
import {
  type HistoryFacts,
  historyFacts,
  type SavedHistory,
  savedHistories,
} from '../../bench/temporal-actions';
import { loadConfig } from '../../common/config';
import { depositWorkflowId } from '../../contracts/deposit';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { type ApiEnv, eventually, freshCpf, inboxOf, onboardApproved, startApiEnv } from './support';

// docs/cost-model.md counts a flow's actions from the saved histories, which tests recorded
// starting some workflows by hand, corrected for how pixflow starts them, and gives the rows a
// flow leaves in Postgres (MEASURED_ROWS). Here deposits and a payout run as a client runs them,
// through the API, the provider's notifications and the ingress: their histories must bill what
// the page counts for their paths, and Postgres hold the rows it says.

let e: ApiEnv;
const PERSON = freshCpf();
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

beforeAll(async () => {
  // The default reconciliation schedule (its first look after 30 s): the notification alone
  // settles each flow, as on the path the page counts. A QR of 4 s, for one left unpaid.
  e = await startApiEnv({}, { sandbox: { depositExpiryMs: 4_000 } });
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  await onboardApproved(e, PERSON);
});
afterAll(async () => {
  await e?.close();
});

const saved = (name: string): SavedHistory => {
  const h = savedHistories().find((s) => s.name === name);
  if (!h) throw new Error(`no saved history ${name}`);
  return h;
};

/** The closed workflow's history as the server keeps it, counted. */
async function completedFacts(workflowId: string): Promise<HistoryFacts> {
  const handle = e.temporal.workflow.getHandle(workflowId);
  await eventually(
    () => handle.describe(),
    (d) => d.status.name === 'COMPLETED',
  );
  const history = await handle.fetchHistory();
  return historyFacts(history, temporal.api.history.v1.History.encode(history).finish().length);
}

const count = async (sql: string, workflowId: string) =>
  Number((await e.pool.query<{ n: string }>(sql, [workflowId])).rows[0]?.n);
const rowsOf = async (workflowId: string) => ({
  flows: await count('SELECT count(*) AS n FROM flows WHERE workflow_id = $1', workflowId),
  events: await count('SELECT count(*) AS n FROM events WHERE stream_id = $1', workflowId),
  inbox: (await inboxOf(e, workflowId)).length,
});

let n = 0;
async function deposit(): Promise<string> {
  const body = {
    client: { externalId: `cost-${++n}`, cpf: PERSON, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
  };
  const res = await e.call('POST', '/v1/deposits', { body });
  expect(res.status).toBe(201);
  return ((await res.json()) as { txid: string }).txid;
}

describe('the cost model against flows run through the API', () => {
  it('a paid deposit bills what `deposit-paid` is counted at and leaves the rows measured', async () => {
    const txid = await deposit();
    await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: 'Someone' });
    const facts = await completedFacts(depositWorkflowId(txid));
    expect(facts.actions.total).toBe(saved('deposit-paid').actions);
    expect(await rowsOf(depositWorkflowId(txid))).toEqual(MEASURED_ROWS['deposit-paid']);
  });

  it('a deposit never paid bills what `deposit-expired-one-look` is counted at, and its rows', async () => {
    const txid = await deposit();
    const facts = await completedFacts(depositWorkflowId(txid));
    expect(facts.actions.total).toBe(saved('deposit-expired-one-look').actions);
    expect(await rowsOf(depositWorkflowId(txid))).toEqual(MEASURED_ROWS['deposit-expired-one-look']);
  });

  it('a plain payout bills what `withdrawal-reconciliation-hint` is counted at, and its rows', async () => {
    const transactionId = `cost-wd-${Date.now()}`;
    const body = {
      transactionId,
      client: { externalId: 'cost-2', cpf: PERSON, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: PERSON,
      pixType: 'CPF',
      amountCentavos: 25_050,
    };
    expect((await e.call('POST', '/v1/withdrawals', { body })).status).toBe(202);
    await eventually(
      async () =>
        (
          (await (await e.call('GET', `/v1/withdrawals/${transactionId}`)).json()) as {
            state: { status: string };
          }
        ).state.status,
      (s) => s === 'processing',
    );
    await e.sandboxControl(`/sandbox/withdrawals/${transactionId}/settle`);
    const facts = await completedFacts(withdrawalWorkflowId(transactionId));

    expect(facts.actions.total).toBe(saved('withdrawal-reconciliation-hint').actions);
    expect(await rowsOf(withdrawalWorkflowId(transactionId))).toEqual(
      MEASURED_ROWS['withdrawal-reconciliation-hint'],
    );
  });
});
