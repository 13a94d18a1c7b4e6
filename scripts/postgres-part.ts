import { z } from 'zod';
import { onShutdown } from '../common/http';
import { startEmbeddedPostgres } from '../db/embedded';

// npm start's embedded Postgres, in a process that scripts/start.ts runs in a process group of its
// own: a Ctrl-C on the terminal then reaches start.ts alone, which stops Postgres last, once the
// API and workers are gone. Started by start.ts's own process, Postgres would get the Ctrl-C too
// and end their connections under them. Its log goes to stdout; the database's URL to start.ts
// over IPC once it serves. It stops Postgres on SIGTERM, or when start.ts is gone.

const argsSchema = z.object({
  dataDir: z.string().min(1),
  port: z.coerce.number().int().min(1).max(65_535),
});

/** What this process tells start.ts once Postgres serves. */
export const postgresReadySchema = z.object({ url: z.string().startsWith('postgresql://') });

async function main() {
  const { dataDir, port } = argsSchema.parse({ dataDir: process.argv[2], port: process.argv[3] });
  const server = startEmbeddedPostgres({
    dataDir,
    port,
    persistent: true,
    // From start.ts's environment, never its arguments (which `ps` shows).
    ...(process.env.EMBEDDED_PG_PASSWORD ? { password: process.env.EMBEDDED_PG_PASSWORD } : {}),
    onLog: (chunk) => process.stdout.write(String(chunk)),
  });
  // Set before it serves: a stop while it starts waits for it, so it is not left behind.
  onShutdown(async () => {
    const pg = await server.catch(() => undefined);
    await pg?.stop();
  });
  const url = await (await server).createDatabase('pixflow');
  process.send?.(postgresReadySchema.parse({ url }));
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
