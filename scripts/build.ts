import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

// `npm run build [-- --out-dir DIR]`: the processes the image runs, compiled to JavaScript
// (tsconfig.build.json: the API, the worker, its workflows, the sandbox, the migrations and the
// operator CLI, with everything they import), plus the files they read next to their code. The
// Dockerfile's build stage runs it; its runtime stage runs `node dist/<part>/main.js`.

const ROOT = path.resolve(__dirname, '..');

/** Read at run time from beside the module that reads them (path.join(__dirname, ...)). */
const ASSETS = ['backoffice/views', 'backoffice/assets', 'sandbox/views', 'db/migrations'];

/** Compiles into `out` (emptied first) and copies the assets; throws on a type error. */
function build(out: string): void {
  // It is emptied first: only the checkout's own dist/, or a folder outside (not above) it.
  const inside = !path.relative(ROOT, out).startsWith('..');
  const above = !path.relative(out, ROOT).startsWith('..');
  if (above || (inside && out !== path.join(ROOT, 'dist')))
    throw new Error(`refusing to build into ${out}: only dist/ or a folder outside the checkout`);
  rmSync(out, { recursive: true, force: true });
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const r = spawnSync(
    process.execPath,
    [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', out],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  if (r.status !== 0) throw new Error(`tsc failed (exit ${r.status ?? r.signal})`);
  for (const dir of ASSETS) cpSync(path.join(ROOT, dir), path.join(out, dir), { recursive: true });
}

if (require.main === module) {
  const { values } = parseArgs({ options: { 'out-dir': { type: 'string', default: 'dist' } } });
  try {
    build(path.resolve(values['out-dir']));
  } catch (err) {
    process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
