import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { waitUntil } from './wait';

// Runs one of the repository's npm scripts as a user types it (`npm run <name>`), in a process
// group of its own so that stopping it stops what npm started, and keeps what it prints.

const ROOT = path.resolve(__dirname, '..', '..');
/**
 * npm as `npm test` ran it (its CLI, under this Node), else the one on PATH. Either way the
 * scripts' `node` is the one running the tests: its folder comes first on PATH.
 */
const npm = (args: string[]): [string, string[]] => {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', args];
};

export interface NpmScript {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  /** Its exit code once it ended by itself. */
  exited: Promise<number | null>;
  /** Waits until it printed a line matching `pattern`; fails if it exits first. */
  printed: (pattern: RegExp, timeoutMs: number) => Promise<RegExpMatchArray>;
  /** SIGTERM to its whole process group, SIGKILL after `graceMs`; resolves once npm exited. */
  stop: (graceMs?: number) => Promise<void>;
}

export function runNpmScript(name: string, env: NodeJS.ProcessEnv): NpmScript {
  const [command, args] = npm(['run', '--silent', name]);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  child.stderr?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (c) => {
      code = c;
      resolve(c);
    });
    child.once('error', (err) => {
      out += `could not run npm: ${err.message}\n`;
      code = null;
      resolve(null);
    });
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  return {
    child,
    output: () => out,
    exited,
    printed: (pattern, timeoutMs) =>
      waitUntil(
        async () => {
          // What it printed before it exited counts: a script that prints and ends is a pass.
          const match = out.match(pattern);
          if (match === null && code !== undefined) {
            throw new Error(`npm run ${name} exited with ${code}:\n${out}`);
          }
          return match;
        },
        (m) => m !== null,
        {
          timeoutMs,
          intervalMs: 200,
          onTimeout: () =>
            new Error(`npm run ${name} did not print ${pattern} within ${timeoutMs} ms:\n${out}`),
        },
      ) as Promise<RegExpMatchArray>,
    async stop(graceMs = 10_000) {
      if (code !== undefined) {
        signalGroup('SIGKILL');
        return;
      }
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // What npm started, should it outlive npm.
      signalGroup('SIGKILL');
    },
  };
}
