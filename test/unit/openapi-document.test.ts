import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as biometricsSchemas from '../../api/biometrics-schemas';
import * as customersSchemas from '../../api/customers-schemas';
import * as depositsSchemas from '../../api/deposits-schemas';
import * as flowsSchemas from '../../api/flows-schemas';
import * as onboardingsSchemas from '../../api/onboardings-schemas';
import { buildOpenApiDocument, problemSchema } from '../../api/openapi';
import * as withdrawalsSchemas from '../../api/withdrawals-schemas';
import { eventTypes } from '../../contracts/events';
import { cpfSchema, emailSchema } from '../../contracts/flow-input';
import { pixKeyProblem } from '../../contracts/pix-key';
import * as eventSchemas from '../../events/event-schemas';

interface Schema {
  $ref?: string;
  example?: unknown;
  examples?: unknown[];
  format?: string;
  description?: string;
}
interface Operation {
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { headers?: Record<string, { required?: boolean }>; content?: Record<string, { schema: Schema }> }
  >;
  parameters?: { name: string; in?: string; schema: Schema }[];
}

const schemas = {
  ...onboardingsSchemas,
  ...biometricsSchemas,
  ...depositsSchemas,
  ...withdrawalsSchemas,
  ...flowsSchemas,
  ...customersSchemas,
  ...eventSchemas,
  problemSchema,
};
const doc = buildOpenApiDocument() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, op })),
);
const component = (s: Schema | undefined) =>
  s?.$ref ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] : s;

describe('/openapi.json', () => {
  it('lists the 429 every /v1 route can answer, with its Retry-After header', () => {
    expect(operations.length).toBeGreaterThan(5);
    for (const { label, op } of operations) {
      expect(op.responses['429'], label).toBeDefined();
      expect(op.responses['429']?.headers?.['Retry-After']?.required, label).toBe(true);
      expect(op.responses['429']?.content?.['application/problem+json'], label).toBeDefined();
    }
  });

  it('names a path parameter as the body field it stands for: a withdrawal by its transactionId', () => {
    const withdrawalPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/withdrawals/'));
    expect(withdrawalPaths).toHaveLength(3);
    for (const p of withdrawalPaths) {
      expect(p).toMatch(/^\/v1\/withdrawals\/\{transactionId\}/);
      // Its path's own parameters: every /v1 operation also takes the Pixflow-Brand header.
      expect(
        doc.paths[p]?.get?.parameters?.filter((x) => x.in === 'path').map((x) => x.name),
        p,
      ).toEqual(['transactionId']);
    }
  });

  it('publishes the CPF rule as the named format cpf, with a description and examples', () => {
    const cpf = doc.components.schemas.Cpf;
    expect(cpf).toMatchObject({ type: 'string', format: 'cpf', pattern: '^\\d{11}$' });
    expect(cpf?.description).toMatch(/check digits/);
    expect(cpf?.examples?.length).toBeGreaterThan(0);
    const param = doc.paths['/v1/onboardings/{cpf}']?.get?.parameters?.find((p) => p.name === 'cpf');
    expect(component(param?.schema)?.format).toBe('cpf');
  });

  it('documents birthday as a real date', () => {
    const client = JSON.stringify(doc.components.schemas.DepositRequest);
    expect(client).toMatch(/"birthday":\{"type":"string","format":"date"/);
  });

  it('gives every request body and JSON answer an example its own schema accepts', () => {
    for (const { label, op } of operations) {
      const bodies = [
        op.requestBody?.content['application/json']?.schema,
        ...Object.values(op.responses).map((r) => r.content?.['application/json']?.schema),
      ].filter((s) => s !== undefined);
      for (const s of bodies) expect(component(s)?.example, label).toBeDefined();
    }
    const withExamples = Object.entries(schemas).filter(
      ([, s]) =>
        typeof (s as z.ZodType).meta === 'function' && (s as z.ZodType).meta()?.example !== undefined,
    );
    expect(withExamples.length).toBeGreaterThanOrEqual(10);
    for (const [name, s] of withExamples) {
      const r = (s as z.ZodType).safeParse((s as z.ZodType).meta()?.example);
      expect(r.error?.issues ?? [], name).toEqual([]);
    }
  });

  it('admits no text the API refuses: NUL in a request string, an e-mail zod would not take', () => {
    const request = doc.components.schemas.OnboardingRequest as {
      properties: Record<string, Schema & { pattern?: string }>;
    };
    const event = new RegExp(request.properties.event?.pattern ?? '', 'u');
    expect(event.test('signup')).toBe(true);
    expect(event.test('sign\u0000up')).toBe(false);
    // Answers may quote text back (a parse error), so they carry no such rule.
    const problem = doc.components.schemas.Problem as { properties: Record<string, { pattern?: string }> };
    expect(problem.properties.detail?.pattern).toBeUndefined();

    const deposit = doc.components.schemas.DepositRequest as {
      properties: { client: { properties: Record<string, { pattern?: string; format?: string }> } };
    };
    const email = deposit.properties.client.properties.email;
    expect(email?.format).toBeUndefined();
    const emailRule = new RegExp(email?.pattern ?? '', 'u');
    for (const v of [
      'ana@example.com',
      'a!b@example.com',
      '"quoted"@example.com',
      '.ana@example.com',
      'ana@[127.0.0.1]',
    ]) {
      expect(emailRule.test(v), v).toBe(emailSchema.safeParse(v).success);
    }
  });

  it("publishes the pixKey rule of each pixType, agreeing with the API's own check", () => {
    const withdrawal = doc.components.schemas.WithdrawalRequest as {
      oneOf: {
        properties: { pixType: { const: string }; pixKey: Schema & { pattern?: string; maxLength?: number } };
      }[];
    };
    const rule = (type: string) =>
      withdrawal.oneOf.find((v) => v.properties.pixType.const === type)?.properties.pixKey;
    const admits = (type: string, key: string) => {
      const r = component(rule(type)) as { pattern?: string; maxLength?: number; format?: string };
      if (r.format === 'cpf') return cpfSchema.safeParse(key).success;
      return new RegExp(r.pattern ?? '', 'u').test(key) && key.length <= (r.maxLength ?? Infinity);
    };
    const samples: [string, string][] = [
      ['CPF', '63401825771'],
      ['CPF', '63401825772'],
      ['EMAIL', 'ana.costa+pix@example.com.br'],
      ['EMAIL', `${'a'.repeat(70)}@example.com`],
      ['EMAIL', 'not-an-email'],
      ['PHONE', '+5511987654321'],
      ['PHONE', '+1555123456'],
      ['EVP', '7d9f0335-8dcc-4054-9bf9-0dbd61d36906'],
      ['EVP', '7D9F0335-8DCC-4054-9BF9-0DBD61D36906'],
      ['EVP', 'not-a-uuid'],
      ['ACCOUNT', '63401825771;00000000;0001;123456;CACC'],
      ['ACCOUNT', 'ana@example.com;60701190;1234;987654321;SVGS'],
      ['ACCOUNT', ';60701190;1234;987654321;SVGS'],
      ['ACCOUNT', 'ana@example.com;6070119;1234;987654321;SVGS'],
      ['ACCOUNT', 'ana@example.com;60701190;1234;98765-4321;TRAN'],
    ];
    expect(withdrawal.oneOf.map((v) => v.properties.pixType.const).sort()).toEqual([
      'ACCOUNT',
      'CPF',
      'EMAIL',
      'EVP',
      'PHONE',
    ]);
    for (const [type, key] of samples) {
      expect(admits(type, key), `${type} ${key}`).toBe(pixKeyProblem(key, type) === null);
    }
  });

  it('describes every webhook pixflow sends, with its signature headers and body, by flow type', () => {
    interface Webhook {
      requestBody?: Operation['requestBody'];
      parameters?: { name: string; in: string }[];
      description?: string;
    }
    const webhooks = (
      buildOpenApiDocument() as unknown as { webhooks: Record<string, Record<string, Webhook>> }
    ).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual(
      ['alert', 'biometrics', 'customer', 'deposit', 'onboarding', 'webhook_endpoint', 'withdrawal'].sort(),
    );
    for (const [family, item] of Object.entries(webhooks)) {
      const op = item.post;
      expect(op?.requestBody?.content['application/json']?.schema.$ref, family).toBe(
        '#/components/schemas/WebhookBody',
      );
      expect(op?.parameters?.map((p) => `${p.in}:${p.name}`).sort(), family).toEqual([
        'header:webhook-id',
        'header:webhook-signature',
        'header:webhook-timestamp',
      ]);
      for (const type of eventTypes.filter((t) => t.startsWith(`${family}.`))) {
        expect(op?.description, type).toContain(type);
      }
    }
  });
});
