import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type BundleOptions, bundleWorkflowCode, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { bundlerLogger } from './bundle-log';

// The worker's build id names the workflow code it runs: the Worker Deployment Version is
// (deployment name, build id), and a pinned flow runs to its end on workers of its build id.
// Two workers with the same id must run the same workflow code; a new release must get a new id.

/** The package's folder: the checkout, or the image's /app above the compiled dist/. */
function packageRoot(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

const ROOT = packageRoot();

/** A short hash of the workflow bundle: the same code, the same hash. */
export function bundleHash(bundleCode: string): string {
  return createHash('sha256').update(bundleCode).digest('hex').slice(0, 12);
}

/** The package's version (package.json): what a release is called. */
export function packageVersion(root = ROOT): string {
  const pkg = z
    .object({ version: z.string().min(1) })
    .parse(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
  return pkg.version;
}

/** The checked-out commit, and whether tracked files differ from it; undefined without git. */
export function gitCommit(root = ROOT): { commit: string; modified: boolean } | undefined {
  const git = (...args: string[]) =>
    spawnSync('git', ['-C', root, ...args], { encoding: 'utf8', timeout: 5_000 });
  const head = git('rev-parse', '--short=12', 'HEAD');
  if (head.error || head.status !== 0 || !/^[0-9a-f]{7,40}$/.test(head.stdout.trim())) return undefined;
  const status = git('status', '--porcelain', '--untracked-files=no');
  return { commit: head.stdout.trim(), modified: status.status !== 0 || status.stdout.trim() !== '' };
}

/**
 * `<version>+<commit>` from a clean checkout; `<version>+<commit>.<bundle hash>` from one with
 * changes (the commit alone would not name the code); `<version>+<bundle hash>` without git
 * (an image built without .git: set WORKER_BUILD_ID from the build instead).
 */
export function buildIdFor(bundleCode: string, root = ROOT): string {
  const version = packageVersion(root);
  const git = gitCommit(root);
  if (!git) return `${version}+${bundleHash(bundleCode)}`;
  return git.modified ? `${version}+${git.commit}.${bundleHash(bundleCode)}` : `${version}+${git.commit}`;
}

/** The workflow bundle the worker runs, built once at start, with its interceptors and payload converter. */
export async function workflowBundle(
  workflowsPath: string,
  options: Pick<BundleOptions, 'workflowInterceptorModules' | 'payloadConverterPath'> = {},
) {
  // The runtime's logger, as when the worker bundles the code itself, without webpack's report.
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    ...options,
    logger: bundlerLogger(Runtime.instance().logger),
  });
  return { code };
}
