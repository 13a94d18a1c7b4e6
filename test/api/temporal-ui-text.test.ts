import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { biometricsWorkflowId } from '../../contracts/biometrics';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { shownMarkdown } from '../helpers/markdown';
import { type ApiEnv, freshCpf, json, onboardApproved, PII_KEY, startApiEnv } from './support';

// What an operator reads of a flow in the Temporal UI, which renders each text as Markdown: the
// summary and details the API starts it with, and the status the flow keeps current. A masked
// CPF (***.456.789-**) and whatever a caller sent (an event name, a userRef, a transactionId) read
// as written, never as bold, italics, links or a placeholder the UI fills in.

let e: ApiEnv;
beforeAll(async () => {
  e = await startApiEnv();
});
afterAll(async () => {
  await e?.close();
});

const handle = (workflowId: string) => e.temporal.workflow.getHandle(workflowId);

/** Renders as plain text: one paragraph, nothing emphasised or linked, and says `parts`. */
function expectPlain(markdown: string | undefined, parts: string[]) {
  const { tags, text } = shownMarkdown(markdown ?? '');
  expect(tags, markdown).toEqual(['p']);
  for (const part of parts) expect(text, markdown).toContain(part);
}

/** The details the flow keeps current (setCurrentDetails), as the UI asks for them. */
async function currentDetails(h: WorkflowHandle): Promise<string> {
  const meta = await h.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return meta.currentDetails ?? '';
}

describe('Temporal UI texts show what they say', () => {
  it("an onboarding's summary and details: the masked CPF and the caller's values as sent", async () => {
    const cpf = freshCpf();
    const event = 'sign_up*2*';
    const userRef = 'ref_[a](b)_{workflowId}';
    const res = await e.call('POST', '/v1/onboardings', {
      body: { cpf, plan: 'plan_basic', event, userRef },
    });
    expect(res.status).toBe(201);
    const described = await handle(onboardingWorkflowId(cpfHash(cpf, PII_KEY))).describe();
    expectPlain(await described.staticSummary(), [maskCpf(cpf), 'plan_basic']);
    // The labels are bold on purpose; the values are text.
    const details = shownMarkdown((await described.staticDetails()) ?? '');
    expect(details.tags.sort()).toEqual(['p', 'strong']);
    for (const value of [`event ${event}`, `userRef ${userRef}`, 'plan plan_basic'])
      expect(details.text).toContain(value);
  });

  it("a deposit's and a biometric identification's summaries: the payer's masked CPF", async () => {
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const txid = `${Date.now()}7`;
    const res = await e.call('POST', '/v1/deposits', {
      body: {
        txid,
        amountCentavos: 15_000,
        client: { externalId: 'u-1', cpf, email: 'ana@example.com', name: 'Ana Souza' },
      },
    });
    expect(res.status).toBe(201);
    const deposit = await handle((await json(res)).workflowId).describe();
    expectPlain(await deposit.staticSummary(), [`payer ${maskCpf(cpf)}`, 'R$ 150,00']);

    expect((await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`)).status).toBe(200);
    const biometrics = await handle(biometricsWorkflowId(cpfHash(cpf, PII_KEY))).describe();
    expectPlain(await biometrics.staticSummary(), [`Biometric identification ${maskCpf(cpf)}`]);
  });

  it("a withdrawal's summary and its current status and reason", async () => {
    const cpf = freshCpf();
    const transactionId = `_ui.${Date.now()}_`;
    const res = await e.call('POST', '/v1/withdrawals', {
      body: {
        transactionId,
        amountCentavos: 1_000,
        pixKey: cpf,
        pixType: 'CPF',
        client: { externalId: 'u-1', cpf, email: 'ana@example.com', name: 'Ana Souza' },
      },
    });
    // Never onboarded: refused at once, by its flow, which the 409 names.
    expect(res.status).toBe(409);
    const answer = await json(res);
    expect(answer.state).toMatchObject({ status: 'refused', reason: 'not_verified' });
    const h = handle(answer.workflowId);
    expectPlain(await (await h.describe()).staticSummary(), [transactionId, `payee ${maskCpf(cpf)}`]);
    const status = shownMarkdown(await currentDetails(h));
    expect(status).toEqual({ tags: ['p', 'strong'], text: 'refused — not_verified' });
  });
});
