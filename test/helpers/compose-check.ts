import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Builds scripts/compose-check (compose-go, the Compose specification's reference loader) into
// the cache folder, once per version of its source, and runs it: `docker compose config` where
// no Docker engine runs.

const ROOT = path.resolve(__dirname, '../..');
const SOURCE = path.join(ROOT, 'scripts/compose-check');

export function composeCheckBinary(): string {
  const hash = createHash('sha256');
  for (const f of ['main.go', 'go.mod', 'go.sum']) hash.update(readFileSync(path.join(SOURCE, f)));
  const bin = path.join(ROOT, '.cache', 'compose-check', hash.digest('hex').slice(0, 12), 'compose-check');
  if (existsSync(bin)) return bin;
  mkdirSync(path.dirname(bin), { recursive: true });
  const r = spawnSync('go', ['build', '-o', bin, '.'], {
    cwd: SOURCE,
    env: { ...process.env, CGO_ENABLED: '0' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`go build of scripts/compose-check failed:\n${r.stderr}`);
  return bin;
}

/** Loads `composeFile` with only `envFile`'s variables; exit code and what it printed. */
export function composeConfig(composeFile: string, envFile: string) {
  const r = spawnSync(composeCheckBinary(), [composeFile, envFile], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The project `docker compose config --format json` prints: every service with its command,
 * entrypoint, environment after interpolation, depends_on, healthcheck and deploy.
 */
export function composeProject(composeFile: string, envFile: string): unknown {
  const r = spawnSync(composeCheckBinary(), ['--json', composeFile, envFile], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  if (r.status !== 0) throw new Error(`compose-check --json ${composeFile} failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}
