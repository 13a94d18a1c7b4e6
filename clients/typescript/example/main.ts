import { createExampleBackend } from './backend';

// Runs the example backend: PIXFLOW_URL and PIXFLOW_API_KEY say where pixflow is and the key to
// use, PUBLIC_URL where pixflow reaches this backend (its webhook endpoint is PUBLIC_URL's
// /webhooks/pixflow), PORT where it listens.
//   PIXFLOW_URL=http://127.0.0.1:3000 PIXFLOW_API_KEY=dev-api-key \
//   PUBLIC_URL=https://game.example.com npx tsx clients/typescript/example/main.ts

const { PIXFLOW_URL, PIXFLOW_API_KEY, PUBLIC_URL, PORT = '8080' } = process.env;
if (!PIXFLOW_URL || !PIXFLOW_API_KEY || !PUBLIC_URL) {
  process.stderr.write('set PIXFLOW_URL, PIXFLOW_API_KEY and PUBLIC_URL\n');
  process.exit(2);
}
const backend = createExampleBackend({ pixflowUrl: PIXFLOW_URL, apiKey: PIXFLOW_API_KEY });
backend.app.listen(Number(PORT), () => {
  backend.subscribe(`${PUBLIC_URL}/webhooks/pixflow`, ['*']).then(
    (id) => process.stdout.write(`listening on ${PORT}; pixflow pushes events to webhook endpoint ${id}\n`),
    (err: unknown) => {
      process.stderr.write(`could not register the webhook endpoint: ${String(err)}\n`);
      process.exit(1);
    },
  );
});
