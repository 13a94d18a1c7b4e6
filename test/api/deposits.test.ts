import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositStateResponseSchema } from '../../api/schemas';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import {
  AmountKey,
  CpfHashKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../../common/search-attributes';
import { depositWorkflowId } from '../../contracts/deposit';
import { expectActivityFailure } from '../helpers/sdk-log';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  PII_KEY,
  PNG_SIGNATURE,
  startApiEnv,
} from './support';

let e: ApiEnv;
let n = 0;

beforeAll(async () => {
  // Reconciliation every second: a paid deposit completes without a webhook.
  e = await startApiEnv({ pollScheduleMs: [1_000] });
});
afterAll(async () => {
  await e?.close();
});

const depositBody = (over: Record<string, unknown> = {}) => ({
  client: { externalId: `user-${++n}`, cpf: freshCpf(), email: 'ana@example.com', name: 'Ana Souza' },
  amountCentavos: 15_000,
  ...over,
});

describe('deposits', () => {
  it('answers the QR in one call (201), the same QR again (200), and its PNG', async () => {
    const body = depositBody();
    const res = await e.call('POST', '/v1/deposits', { body });
    expect(res.status).toBe(201);
    const qr = (await res.json()) as Record<string, string | number>;
    expect(qr.txid).toMatch(/^\d{32}$/);
    expect(qr.amountCentavos).toBe(15_000);
    expect(qr.payload).toMatch(/^000201/);
    expect(qr.image).toMatch(/^data:image\/png;base64,/);
    expect(qr.workflowId).toBe(depositWorkflowId(String(qr.txid)));
    expect(res.headers.get('location')).toBe(`/v1/deposits/${qr.txid}`);

    // Operators can find it in the Temporal UI by type, status, CPF hash (never the CPF), amount, merchant.
    const sa = (await e.temporal.workflow.getHandle(String(qr.workflowId)).describe()).typedSearchAttributes;
    expect(sa.get(FlowTypeKey)).toBe('deposit');
    expect(sa.get(FlowStatusKey)).toMatch(/^(creating|awaiting_payment)$/);
    expect(sa.get(CpfHashKey)).toBe(cpfHash(body.client.cpf, PII_KEY));
    expect(sa.get(CpfMaskedKey)).toBe(maskCpf(body.client.cpf));
    expect(sa.get(AmountKey)).toBe(15_000);
    expect(sa.get(MerchantKey)).toBe('sandbox-merchant');

    const again = await e.call('POST', '/v1/deposits', { body: { ...body, txid: qr.txid } });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(qr);

    // A state read carries the QR's payload and a link to its PNG, not the image itself.
    const state = await e.call('GET', `/v1/deposits/${qr.txid}`);
    expect(state.status).toBe(200);
    const text = await state.text();
    expect(text).not.toContain('base64');
    const read = depositStateResponseSchema.strict().parse(JSON.parse(text));
    expect(read).toMatchObject({
      workflowId: qr.workflowId,
      state: {
        txid: qr.txid,
        amountCentavos: 15_000,
        qr: { payload: qr.payload, expiresAt: qr.expiresAt, imageUrl: `/v1/deposits/${qr.txid}/qrcode.png` },
      },
    });
    expect(read.state.qr).not.toHaveProperty('image');

    const png = await e.call('GET', String(read.state.qr?.imageUrl));
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await png.arrayBuffer());
    expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(`data:image/png;base64,${bytes.toString('base64')}`).toBe(qr.image);
    const image = PNG.sync.read(bytes);
    expect(image.width).toBeGreaterThan(50);
  });

  it('the same txid with another amount, payer or merchant is a 409', async () => {
    const txid = String(Date.now()) + String(++n);
    const body = depositBody({ txid });
    expect((await e.call('POST', '/v1/deposits', { body })).status).toBe(201);
    for (const other of [
      { ...body, amountCentavos: 99 },
      { ...body, client: { ...body.client, cpf: freshCpf() } },
      { ...body, merchant: 'other-merchant' },
    ]) {
      const p = await expectProblem(await e.call('POST', '/v1/deposits', { body: other }), 409, 'conflict');
      expect(p.detail).toMatch(/different deposit/);
    }
  });

  it('a deposit the provider refuses is a 422 with the reason, never a 5xx', async () => {
    const txid = `9${Date.now()}${++n}`;
    const body = { ...depositBody(), txid };
    // Occupy the txid at the provider with another amount: our create is then refused as a duplicate.
    await e.provider.createDeposit({ client: body.client, amountCentavos: 1, txid });
    const refused = expectActivityFailure({
      workflowId: depositWorkflowId(txid),
      activityType: 'createDepositQr',
      error: /duplicate transaction/,
    });
    const p = await expectProblem(await e.call('POST', '/v1/deposits', { body }), 422, 'deposit-failed');
    expect(p.detail).toBeTruthy();
    // Once the flow has closed, a repeat finds it (never a second flow for the txid): same answers.
    const handle = e.temporal.workflow.getHandle(depositWorkflowId(txid));
    await handle.result();
    expect(refused()).toHaveLength(1);
    await expectProblem(await e.call('POST', '/v1/deposits', { body }), 422, 'deposit-failed');
    await expectProblem(await e.call('POST', '/v1/deposits', { body: { ...body, amountCentavos: 5 } }), 409);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const runs = await eventually(
      () => e.temporal.workflow.count(`WorkflowId = '${handle.workflowId}'`),
      (c) => c.count > 0,
    );
    expect(runs.count).toBe(1);
    await expectProblem(await e.call('GET', `/v1/deposits/${txid}/qrcode.png`), 404, 'qrcode-not-found');
  });

  it('invalid bodies and paths are 400 naming the field, and start nothing', async () => {
    const txid = `7${Date.now()}${++n}`;
    const bad = depositBody({ txid, client: { ...depositBody().client, cpf: '12345678900' } });
    const p = await expectProblem(
      await e.call('POST', '/v1/deposits', { body: bad }),
      400,
      'validation-error',
    );
    expect(p.invalid_params?.map((i) => i.name)).toContain('body.client.cpf');
    const cents = await expectProblem(
      await e.call('POST', '/v1/deposits', { body: depositBody({ txid, amountCentavos: 10.5 }) }),
      400,
    );
    expect(cents.invalid_params?.map((i) => i.name)).toEqual(['body.amountCentavos']);
    expect(await e.workflowExists(depositWorkflowId(txid))).toBe(false);

    const path = await expectProblem(await e.call('GET', '/v1/deposits/abc'), 400);
    expect(path.invalid_params?.[0]?.name).toBe('path.txid');
    await expectProblem(await e.call('GET', '/v1/deposits/123456789'), 404, 'flow-not-found');
  });
});
