import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports';

// The embedded Postgres started from a checkout in a private folder (mode 0700, as `mktemp -d`
// makes and as /root is): node_modules and the data folder inside it. Run as root (as CI and
// this machine run), Postgres runs as the postgres user, who cannot enter that folder; it must
// start all the same, and keep its data between starts, or stop before starting anything with
// one line saying why and what to do.

const ROOT = path.resolve(__dirname, '../..');
const root = process.getuid?.() === 0;
let priv: string;
let app: string;

// The checkout's db/embedded.ts and its node_modules (hard links, the same files) inside the
// private folder, and a small program that starts Postgres from there as npm start does.
const DRIVER = `
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from './db/embedded';

async function main() {
  const port = Number(process.argv[2]);
  const dataDir = String(process.argv[3]);
  const logs: string[] = [];
  const server = await startEmbeddedPostgres({ dataDir, port, persistent: true, onLog: (m) => logs.push(String(m)) });
  const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\\n')[0]);
  const uid = Number(/^Uid:\\s+(\\d+)/m.exec(readFileSync(\`/proc/\${pid}/status\`, 'utf8'))?.[1]);
  const client = new pg.Client({ connectionString: server.url('postgres') });
  await client.connect();
  await client.query('CREATE TABLE IF NOT EXISTS starts (at timestamptz DEFAULT now())');
  await client.query('INSERT INTO starts DEFAULT VALUES');
  const { rows } = await client.query('SELECT count(*)::int AS n FROM starts');
  await client.end();
  await server.stop();
  const notice = logs.find((l) => l.startsWith('Postgres runs as'));
  console.log(JSON.stringify({ starts: rows[0].n, uid, notice }));
}
main().catch((err) => {
  process.stderr.write(\`\${err instanceof Error ? err.message : String(err)}\\n\`);
  process.exit(1);
});
`;

beforeAll(() => {
  priv = mkdtempSync(path.join(os.tmpdir(), 'pixflow-private-'));
  expect(statSync(priv).mode & 0o777).toBe(0o700);
  app = path.join(priv, 'app');
  mkdirSync(path.join(app, 'db'), { recursive: true });
  let cp = spawnSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(app, 'node_modules')]);
  if (cp.status !== 0)
    cp = spawnSync('cp', ['-a', path.join(ROOT, 'node_modules'), path.join(app, 'node_modules')]);
  expect(cp.status, String(cp.stderr)).toBe(0);
  copyFileSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
  copyFileSync(path.join(ROOT, 'db/embedded.ts'), path.join(app, 'db/embedded.ts'));
  writeFileSync(path.join(app, 'start-postgres.ts'), DRIVER);
}, 120_000);

afterAll(() => {
  if (!priv) return;
  const tmpHome = path.join(os.tmpdir(), 'pixflow-postgres');
  // What the starts made outside the private folder for it: its data, the loader that pointed into it.
  const linked = path.join(app, '.data', 'pg');
  if (existsSync(linked)) rmSync(realpathSync(linked), { recursive: true, force: true });
  for (const name of existsSync(tmpHome) ? readdirSync(tmpHome) : []) {
    const pgLink = path.join(tmpHome, name, 'node_modules', 'pg');
    if (
      name.startsWith('runner-') &&
      existsSync(path.dirname(pgLink)) &&
      readlinkSync(pgLink).startsWith(priv)
    ) {
      rmSync(path.join(tmpHome, name), { recursive: true, force: true });
    }
  }
  rmSync(priv, { recursive: true, force: true });
});

async function startPostgres(dataDir: string) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'start-postgres.ts', String(await freePort()), dataDir],
    {
      cwd: app,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  return { status: r.status, stderr: r.stderr, out: r.stdout.trim().split('\n').pop() ?? '' };
}

describe('the embedded Postgres from a private folder', () => {
  it('starts, as the postgres user when root, and keeps its data between starts', async () => {
    const dataDir = path.join(app, '.data', 'pg');
    const first = await startPostgres(dataDir);
    expect(first.status, first.stderr).toBe(0);
    const one = JSON.parse(first.out) as { starts: number; uid: number; notice?: string };
    expect(one.starts).toBe(1);
    const second = await startPostgres(dataDir);
    expect(second.status, second.stderr).toBe(0);
    const two = JSON.parse(second.out) as { starts: number; uid: number; notice?: string };
    expect(two.starts).toBe(2);
    if (root) {
      const postgresUid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      expect(two.uid).toBe(postgresUid);
      // It says where Postgres runs from, since it is not where it was asked to.
      expect(two.notice).toContain(`cannot reach ${priv}`);
    } else {
      expect(two.uid).toBe(process.getuid?.());
    }
  }, 300_000);

  it('stops before starting anything, in one line, when data it cannot reach is already there', async () => {
    // A data folder left by a start as another user: it cannot be moved without asking.
    const dataDir = path.join(app, '.data', 'pg-earlier');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path.join(dataDir, 'PG_VERSION'), '18\n');
    const r = await startPostgres(dataDir);
    if (root) {
      expect(r.status).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`cannot reach its data in ${dataDir}`);
      expect(lines[0]).toContain('DATA_DIR');
      // Nothing was started or touched.
      expect(readdirSync(dataDir)).toEqual(['PG_VERSION']);
    } else {
      // Its owner can reach it: Postgres tries it, and the folder is no cluster.
      expect(r.status).toBe(1);
      expect(r.stderr).not.toContain('cannot reach');
    }
  }, 120_000);
});
