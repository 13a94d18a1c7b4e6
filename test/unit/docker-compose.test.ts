import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { searchAttributeKeys } from '../../common/search-attributes';

// No Docker engine runs here, so the compose file is checked by its structure.
const service = z.looseObject({
  image: z.string().optional(),
  build: z.unknown().optional(),
  command: z.unknown().optional(),
  ports: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  healthcheck: z.object({ test: z.array(z.string()) }).optional(),
});
const compose = z.object({ services: z.record(z.string(), service) });

const file = parse(readFileSync(path.join(__dirname, '../../docker-compose.yml'), 'utf8'), { merge: true });
const { services } = compose.parse(file);

describe('docker-compose.yml', () => {
  it('has the production-shaped topology', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'sandbox', 'worker', 'api']) {
      expect(services, name).toHaveProperty(name);
    }
    expect(services.temporal?.image).toMatch(/^temporalio\/auto-setup:/);
    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    expect(services.postgres?.image).toMatch(/^postgres:1[4-9]/);
  });

  it('runs temporal on the postgres service', () => {
    const env = services.temporal?.environment ?? {};
    expect(env.POSTGRES_SEEDS).toBe('postgres');
    expect(String(env.DB)).toMatch(/^postgres/);
    expect(services.temporal?.depends_on?.postgres?.condition).toBe('service_healthy');
  });

  it('publishes the documented ports', () => {
    const published = (name: string) => (services[name]?.ports ?? []).map((p) => p.split(':')[0]);
    expect(published('api')).toContain('3000');
    expect(published('sandbox')).toContain('4010');
    expect(published('temporal')).toContain('7233');
    expect(published('temporal-ui')).toContain('8233');
  });

  it('points worker and api at the temporal and postgres services', () => {
    for (const name of ['worker', 'api']) {
      const env = services[name]?.environment ?? {};
      expect(env.TEMPORAL_ADDRESS, name).toBe('temporal:7233');
      expect(String(env.DATABASE_URL), name).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
      expect(env.PROVIDER_BASE_URL, name).toBe('http://sandbox:4010');
      expect(services[name]?.depends_on?.temporal?.condition).toBe('service_healthy');
      expect(services[name]?.depends_on?.postgres?.condition).toBe('service_healthy');
    }
  });

  it('encrypts payloads with the same keys in api and worker, and points the UI at the codec endpoint', () => {
    for (const name of ['worker', 'api']) {
      const env = services[name]?.environment ?? {};
      expect(String(env.CODEC_KEYS), name).toMatch(/CODEC_KEYS/);
      expect(String(env.CODEC_ACTIVE_KEY_ID), name).toMatch(/CODEC_ACTIVE_KEY_ID/);
    }
    expect(String(services.api?.environment?.CODEC_TOKENS)).toMatch(/CODEC_TOKENS/);
    expect(services['temporal-ui']?.environment?.TEMPORAL_CODEC_ENDPOINT).toBe('http://localhost:3000/codec');
  });

  it('exposes metrics: the API on 3000, the worker on 3001', () => {
    expect(services.worker?.ports).toContain('3001:3001');
    expect(services.api?.ports).toContain('3000:3000');
  });

  it('gives every long-running service a health check', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'sandbox', 'worker', 'api']) {
      expect(services[name]?.healthcheck?.test.length, name).toBeGreaterThan(0);
    }
  });

  it('registers every search attribute the flows use', () => {
    const setup = JSON.stringify(services['temporal-setup']?.command);
    for (const key of searchAttributeKeys) expect(setup).toContain(`${key.name}=`);
  });
});
