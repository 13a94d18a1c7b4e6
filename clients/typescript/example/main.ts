import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { createExampleBackend } from './backend';

// Runs the example backend against a local pixflow (`npm start`): `npm run example:backend`.
// Every setting has a default for that stack; the README of clients/typescript lists its routes.
// It listens on 127.0.0.1 only: pixflow on the same machine reaches it there. To be reached
// from elsewhere, put it behind a proxy or a tunnel and set PUBLIC_URL to where pixflow finds it.

const events = ['*'] as const;
const env = z
  .object({
    /** pixflow's API, and the key this backend holds. */
    PIXFLOW_URL: z.url().default('http://127.0.0.1:3000'),
    PIXFLOW_API_KEY: z.string().min(1).default('dev-api-key'),
    /** Where it listens on 127.0.0.1 (0: a free port). */
    PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
    /** Where pixflow reaches it: its webhook endpoint is PUBLIC_URL/webhooks/pixflow. */
    PUBLIC_URL: z.url().optional(),
  })
  .safeParse(process.env);
if (!env.success) {
  process.stderr.write(`${env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n')}\n`);
  process.exit(2);
}
const { PIXFLOW_URL, PIXFLOW_API_KEY, PORT, PUBLIC_URL } = env.data;

const backend = createExampleBackend({ pixflowUrl: PIXFLOW_URL, apiKey: PIXFLOW_API_KEY });
const server = backend.app.listen(PORT, '127.0.0.1', () => {
  const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const publicUrl = (PUBLIC_URL ?? local).replace(/\/+$/, '');
  backend.subscribe(`${publicUrl}/webhooks/pixflow`, [...events]).then(
    (id) =>
      process.stdout.write(
        `example backend listening on ${local}; pixflow (${PIXFLOW_URL}) pushes every event to ${publicUrl}/webhooks/pixflow (webhook endpoint ${id})\n`,
      ),
    (err: unknown) => {
      process.stderr.write(`could not register the webhook endpoint: ${String(err)}\n`);
      process.exit(1);
    },
  );
});
server.on('error', (err) => {
  process.stderr.write(`could not listen on 127.0.0.1:${PORT}: ${err.message}\n`);
  process.exit(1);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
