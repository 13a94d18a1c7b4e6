import { parseArgs } from 'node:util';
import { z } from 'zod';

// `npm start -- --temporal postgres --workers 2 --apis 2`: which Temporal `npm start` runs and
// how many worker and API processes. With no option it runs what it always ran: the CLI's dev
// server, one worker, one API.

const count = (what: string) =>
  z.coerce
    .number({ error: `--${what} must be a number` })
    .int(`--${what} must be a whole number`)
    .min(1, `--${what} must be 1 to 8`)
    .max(8, `--${what} must be 1 to 8`);

export const startOptionsSchema = z.object({
  /** dev: the Temporal CLI's dev server on SQLite; postgres: the Temporal server on Postgres. */
  temporal: z.enum(['dev', 'postgres'], { error: '--temporal must be dev or postgres' }).default('dev'),
  workers: count('workers').default(1),
  apis: count('apis').default(1),
});

export type StartOptions = z.infer<typeof startOptionsSchema>;

export const START_USAGE = 'usage: npm start [-- --temporal dev|postgres] [--workers N] [--apis N]';

export class StartOptionsError extends Error {}

/** The command line after `npm start --`; a wrong or unknown option is a StartOptionsError. */
export function parseStartOptions(argv: string[]): StartOptions {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { temporal: { type: 'string' }, workers: { type: 'string' }, apis: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new StartOptionsError(`${err instanceof Error ? err.message : String(err)}\n${START_USAGE}`);
  }
  const parsed = startOptionsSchema.safeParse(values);
  if (!parsed.success) {
    throw new StartOptionsError(`${parsed.error.issues.map((i) => i.message).join('\n')}\n${START_USAGE}`);
  }
  return parsed.data;
}
