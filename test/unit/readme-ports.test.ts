import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../common/config';

// The README's table of what `npm start` serves is where a new user looks for a port: every port
// the stack binds by default is in it, and every port in it is the configuration's default.

const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Two commands'), readme.indexOf('## A first deposit'));
const tablePorts = new Set(
  [...section.matchAll(/^\|[^|]+\|([^|]+)\|$/gm)].flatMap((row) =>
    [...row[1]!.matchAll(/(?:127\.0\.0\.1:|port )(\d{2,5})/g)].map((m) => Number(m[1])),
  ),
);

const defaults = envSchema.parse({});
const STACK_PORTS = [
  'API_PORT',
  'SANDBOX_PORT',
  'SANDBOX_API_PIX_PORT',
  'WORKER_HTTP_PORT',
  'WORKER_SDK_METRICS_PORT',
  'TEMPORAL_UI_PORT',
  'PIXFLOW_TEMPORAL_PORT',
  'EMBEDDED_PG_PORT',
] as const;

describe("the README's table of parts", () => {
  it('lists every port npm start binds by default', () => {
    for (const name of STACK_PORTS)
      expect(tablePorts, `${name} (${defaults[name]})`).toContain(defaults[name]);
  });

  it('lists no port the configuration does not bind', () => {
    const bound = new Set(STACK_PORTS.map((name) => defaults[name]));
    for (const p of tablePorts) expect(bound, `port ${p} in the README`).toContain(p);
  });
});
