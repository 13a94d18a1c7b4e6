import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// Builds the event verification examples in clients/verify/ (Python, Go, Java, each on its
// ecosystem's Standard Webhooks library) into the git-ignored cache folder, from the package
// registries only: a venv with the hash-pinned PyPI package, a `go build` through the Go module
// proxy, a `mvn package` from Maven Central. Each build is stamped with a hash of its sources and
// done again only when they change; test/clients/verifiers.test.ts runs what it made.

const ROOT = path.resolve(__dirname, '..');
const SOURCES = path.join(ROOT, 'clients', 'verify');
export const VERIFY_CACHE = path.join(ROOT, '.cache', 'verify');

export const VERIFIER_LANGUAGES = ['python', 'go', 'java'] as const;
export type VerifierLanguage = (typeof VERIFIER_LANGUAGES)[number];

/** How to run one built verifier: the secret and headers in the environment, the body on stdin. */
export interface VerifierCommand {
  command: string;
  args: string[];
}

const log = (msg: string) => process.stderr.write(`[setup] ${msg}\n`);

class VerifierSetupError extends Error {}

const outDir = (lang: VerifierLanguage) => path.join(VERIFY_CACHE, lang);
const stampFile = (lang: VerifierLanguage) => path.join(outDir(lang), '.source-hash');

export function verifierCommand(lang: VerifierLanguage): VerifierCommand {
  switch (lang) {
    case 'python':
      // verify.py runs from its source; only the library lives in the venv.
      return {
        command: path.join(outDir('python'), 'venv', 'bin', 'python'),
        args: [path.join(SOURCES, 'python', 'verify.py')],
      };
    case 'go':
      return { command: path.join(outDir('go'), 'verify'), args: [] };
    case 'java':
      // One short-lived JVM per event: C1 only and the serial GC start fastest.
      return {
        command: 'java',
        args: [
          '-XX:TieredStopAtLevel=1',
          '-XX:+UseSerialGC',
          '-jar',
          path.join(outDir('java'), 'build', 'verify.jar'),
        ],
      };
  }
}

/**
 * The files a build depends on, and no build output a reader's own `go build` or `mvn package`
 * left there: Python's pinned requirements (verify.py runs from source), Go's module and
 * sources, Java's pom and sources.
 */
function inputsOf(lang: VerifierLanguage): string[] {
  const dir = path.join(SOURCES, lang);
  if (lang === 'python') return [path.join(dir, 'requirements.txt')];
  if (lang === 'go') {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum')
      .sort()
      .map((f) => path.join(dir, f));
  }
  const files = readdirSync(path.join(dir, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
  return [path.join(dir, 'pom.xml'), ...files.sort()];
}

export function sourceHash(lang: VerifierLanguage): string {
  const h = createHash('sha256');
  for (const file of inputsOf(lang))
    h.update(path.relative(SOURCES, file)).update('\0').update(readFileSync(file));
  return h.digest('hex');
}

/** Whether the cached build is of the current sources (a stale one would test old code). */
export function verifierIsCurrent(lang: VerifierLanguage): boolean {
  const stamp = stampFile(lang);
  const built = lang === 'java' ? verifierCommand(lang).args.at(-1) : verifierCommand(lang).command;
  return (
    existsSync(stamp) &&
    existsSync(built as string) &&
    readFileSync(stamp, 'utf8').trim() === sourceHash(lang)
  );
}

function onPath(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

function need(cmd: string, install: string): string {
  const found = onPath(cmd);
  if (!found) throw new VerifierSetupError(`${cmd} is needed once to build the event verifiers: ${install}`);
  return found;
}

function run(
  what: string,
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const r = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new VerifierSetupError(`${what} failed (exit ${r.status ?? r.signal})`);
}

const builders: Record<VerifierLanguage, (out: string) => void> = {
  python(out) {
    const python = need('python3', '`apt-get install python3-venv`');
    const venv = path.join(out, 'venv');
    run('python3 -m venv', python, ['-m', 'venv', venv]);
    run('pip install standardwebhooks', path.join(venv, 'bin', 'pip'), [
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--require-hashes',
      '-r',
      path.join(SOURCES, 'python', 'requirements.txt'),
    ]);
  },
  go(out) {
    const go = need('go', 'install Go 1.25+ (`apt-get install golang`)');
    run('go build', go, ['build', '-o', path.join(out, 'verify'), '.'], {
      cwd: path.join(SOURCES, 'go'),
      // go.sum pins the library: a build never edits it.
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
    });
  },
  java(out) {
    need('javac', '`apt-get install openjdk-17-jdk-headless`');
    const mvn = need('mvn', '`apt-get install maven`');
    run('mvn package', mvn, [
      '-B',
      '-q',
      '-Dstyle.color=never',
      '-f',
      path.join(SOURCES, 'java', 'pom.xml'),
      'package',
      `-Dverify.buildDirectory=${path.join(out, 'build')}`,
    ]);
  },
};

/** Builds every verifier whose sources changed since its last build; the seconds each took (0: cached). */
export function ensureVerifiers(): Record<VerifierLanguage, number> {
  const took = { python: 0, go: 0, java: 0 };
  for (const lang of VERIFIER_LANGUAGES) {
    if (verifierIsCurrent(lang)) continue;
    const out = outDir(lang);
    log(`building the ${lang} event verifier into ${out}...`);
    const started = Date.now();
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    try {
      builders[lang](out);
    } catch (err) {
      rmSync(out, { recursive: true, force: true });
      throw err;
    }
    writeFileSync(stampFile(lang), `${sourceHash(lang)}\n`);
    took[lang] = (Date.now() - started) / 1000;
    log(`${lang} event verifier built in ${took[lang].toFixed(1)} s`);
  }
  return took;
}

/** `npm run setup`'s step: a missing tool or a failed build prints one clear line and exits 1. */
export function setupVerifiers(): void {
  try {
    const took = ensureVerifiers();
    const said = VERIFIER_LANGUAGES.map(
      (l) => `${l} ${took[l] ? `built in ${took[l].toFixed(1)} s` : 'cached'}`,
    );
    log(`event verifiers (${VERIFY_CACHE}): ${said.join(', ')}`);
  } catch (err) {
    if (!(err instanceof VerifierSetupError)) throw err;
    process.stderr.write(`pixflow setup: ${err.message}\n`);
    process.exit(1);
  }
}
