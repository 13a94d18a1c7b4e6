import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { buildOpenApiDocument } from '../../api/openapi';
import * as schemas from '../../api/schemas';

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
  parameters?: { name: string; schema: Schema }[];
}

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
});
