// Over 400 lines on purpose: one entry per variable, kept whole so the type can require every one.
import type { z } from 'zod';
import { envSchema } from './config';

// What each setting means, for docs/configuration.md: the table there is generated from this and
// from the schema's own defaults (`npm run docs:config`), and a test fails when it is stale. A new
// variable in the schema without an entry here does not compile.

export interface VariableDoc {
  meaning: string;
  /** Shown instead of the schema's default where that value alone would mislead or is computed. */
  shownDefault?: string;
  /** Said after the schema's default, e.g. what `npm start` sets instead. */
  defaultNote?: string;
  /** The default is a public development value: shown as such, never printed. */
  secret?: true;
}

/** A rule's switch or limit: the Rules page says what it refuses, with which reason, and what to do. */
export const rule = (doc: VariableDoc): VariableDoc => ({
  ...doc,
  meaning: `${doc.meaning} ([Rules](rules.md))`,
});

export const configReference: Record<keyof typeof envSchema.shape, VariableDoc> = {
  API_PORT: { meaning: 'backend API and webhook ingress' },
  API_KEYS: {
    meaning:
      'comma-separated bootstrap API keys, each with every scope; the API refuses to start without one unless Postgres holds a usable key record',
    shownDefault: 'none (`npm start` outside production: `dev-api-key`)',
  },
  API_KEY_CACHE_MS: {
    meaning:
      'how long an API process trusts what it read of a key record (a revocation takes effect within it)',
  },
  AUTH_FAILURE_LIMIT: {
    meaning:
      'failed authentications an address may make per `AUTH_FAILURE_WINDOW_MS` before 429 with `Retry-After` (API keys, and ingress secrets apart), in each API process',
  },
  AUTH_FAILURE_WINDOW_MS: { meaning: 'the window `AUTH_FAILURE_LIMIT` counts over' },
  API_RATE_LIMIT_PER_MINUTE: {
    meaning:
      'requests per minute per API key on `/v1` (429 problem+json with `Retry-After` past it); 0: no limit. Failed authentications have their own limit (`AUTH_FAILURE_LIMIT`), on the ingress too',
  },
  HTTP_HOST: { meaning: 'interface the API, worker health and sandbox bind to' },
  WORKER_HTTP_PORT: { meaning: 'worker `/healthz` and `/metrics`' },
  WORKER_SDK_METRICS_PORT: {
    meaning: "where the Temporal SDK's own Prometheus metrics bind (merged into the worker's `/metrics`)",
  },
  WORKER_MAX_CACHED_WORKFLOWS: {
    meaning:
      'workflows the worker keeps in memory between tasks; set, it wins over the memory ([operations](operations.md), "Sizing the worker\'s memory")',
    shownDefault:
      'from `WORKER_MEMORY_MIB` or the cgroup limit: (¾ of the memory − 560 MiB) ÷ 0.25 MiB a cached flow; `1000` when neither is known',
  },
  WORKER_MEMORY_MIB: {
    meaning:
      'memory the worker is given, in MiB: sizes its cache when `WORKER_MAX_CACHED_WORKFLOWS` is not set ([operations](operations.md), "Sizing the worker\'s memory")',
    shownDefault: "the cgroup's limit (`/sys/fs/cgroup/memory.max`) when there is one",
  },
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: {
    meaning: 'workflow tasks the worker runs at once',
    shownDefault: "the SDK's default",
  },
  WORKER_MAX_CONCURRENT_ACTIVITIES: {
    meaning: 'activities the worker runs at once',
    shownDefault: "the SDK's default",
  },
  WORKER_DEPLOYMENT_NAME: {
    meaning: 'the Worker Deployment the worker belongs to (Worker Versioning, [versioning](versioning.md))',
  },
  WORKER_BUILD_ID: {
    meaning: "the worker's build: a flow pinned to a build runs only on workers of that build",
    shownDefault: '`<package version>+<git commit>` (without git: a hash of the workflow code)',
  },
  WORKER_PROMOTE_NEWEST: {
    meaning:
      "a worker makes its build the deployment's current version when it is the newest registered; false: your rollout promotes builds",
  },
  SANDBOX_PORT: { meaning: 'provider sandbox' },
  DATABASE_URL: {
    meaning:
      "any Postgres 14+ (`postgres://` or `postgresql://`); production refuses a password from this repository (`.env.example`'s, the embedded Postgres's)",
    shownDefault: 'embedded Postgres',
  },
  EMBEDDED_PG_PORT: { meaning: 'port of the embedded Postgres' },
  NODE_ENV: {
    meaning:
      "`production`: every secret must be set and must be the deployment's own ([security](security.md))",
  },
  DATA_DIR: {
    meaning:
      'embedded Postgres data, the Temporal SQLite file and the secrets `npm start` made (`secrets.json`)',
  },
  TEMPORAL_ADDRESS: {
    meaning: 'an existing cluster or Temporal Cloud; when set, `npm start` does not start one',
    shownDefault: 'embedded dev server',
  },
  PIXFLOW_TEMPORAL_PORT: { meaning: 'port of the embedded dev server' },
  TEMPORAL_UI_PORT: { meaning: 'its UI' },
  TEMPORAL_UI_URL: {
    meaning: "where the back office's case pages link to the Temporal UI",
    shownDefault: 'http://127.0.0.1:`TEMPORAL_UI_PORT`',
  },
  BACKOFFICE_SESSION_SECRET: {
    meaning: "signs the back office's session cookie (32+ characters); required in production",
    secret: true,
  },
  BACKOFFICE_SESSION_TTL_MS: { meaning: 'a back-office session ends this long after its last request' },
  BACKOFFICE_SESSION_MAX_AGE_MS: {
    meaning: 'a back-office session ends this long after sign-in, however busy',
  },
  BACKOFFICE_SECURE_COOKIE: {
    meaning: 'the session cookie is sent over https only',
    shownDefault: 'true unless `HTTP_HOST` is loopback',
  },
  BACKOFFICE_SIGNIN_ATTEMPTS: { meaning: 'failed sign-ins per address per 15 minutes before 429' },
  TRUST_PROXY: {
    meaning:
      "Express's `trust proxy`: proxies in front (a number) or which (addresses, subnets, `loopback`); behind a proxy that ends TLS, the back office needs it to set its Secure cookie and to limit sign-ins per client, not per proxy",
  },
  TEMPORAL_NAMESPACE: { meaning: 'the Temporal namespace of every flow' },
  TEMPORAL_CALL_TIMEOUT_MS: {
    meaning:
      "deadline of a request's Temporal calls; past it the API answers 503 `unavailable` with `Retry-After`",
  },
  TEMPORAL_TASK_QUEUE: { meaning: 'the task queue the worker polls and the API starts flows on' },
  TEMPORAL_TLS: {
    meaning:
      'connect to Temporal over TLS (Temporal Cloud, or mTLS with the pair below); on by itself when any setting below is set',
  },
  TEMPORAL_TLS_CERT_PATH: {
    meaning:
      'client certificate for mTLS; with TEMPORAL_TLS_KEY_PATH, or TEMPORAL_API_KEY, required in production unless TEMPORAL_ADDRESS is loopback ([Security](security.md))',
    shownDefault: 'none',
  },
  TEMPORAL_TLS_KEY_PATH: { meaning: 'client key for mTLS', shownDefault: 'none' },
  TEMPORAL_TLS_CA_PATH: {
    meaning: "CA certificate the server's certificate is checked against (a private CA)",
    shownDefault: "none: the system's roots",
  },
  TEMPORAL_TLS_SERVER_NAME: {
    meaning: "name the server's certificate is checked for, when not TEMPORAL_ADDRESS's host",
    shownDefault: "TEMPORAL_ADDRESS's host",
  },
  TEMPORAL_API_KEY: { meaning: 'API key for Temporal Cloud', shownDefault: 'none' },
  PROVIDER_BASE_URL: {
    meaning: "the real provider's service address; when set, `npm start` does not start the sandbox",
    shownDefault: 'the sandbox',
  },
  PROVIDER_AUTH_URL: { meaning: "the real provider's token endpoint host", shownDefault: 'the sandbox' },
  PROVIDER_LIVENESS_URL: { meaning: 'where a person starts the liveness flow', shownDefault: 'the sandbox' },
  PROVIDER_CLIENT_ID: { meaning: 'OAuth client id' },
  PROVIDER_CLIENT_SECRET: {
    meaning:
      "OAuth client secret; production requires the provider's own unless the provider is the sandbox (`PROVIDER_*_URL` unset, on loopback or compose's `sandbox`)",
    shownDefault: "the sandbox's (public: production refuses it for any other provider)",
  },
  PROVIDER_API_KEY: {
    meaning:
      "deposit, withdrawal and receipt credential; production requires the provider's own unless the provider is the sandbox",
    shownDefault: "the sandbox's (public: production refuses it for any other provider)",
  },
  PROVIDER_MERCHANT: { meaning: 'merchant the deposits are made for' },
  PROVIDER_TIMEOUT_MS: { meaning: 'timeout of every provider call' },
  PROVIDER_AUTH_HEADER: {
    meaning:
      "how the OAuth token goes in `Authorization` (the document shows the bare token for KYC and liveness, `Bearer <token>` for inquiries): `auto` sends the document's form, tries the other once on a 401 or 403 and keeps, per endpoint, the one the provider took (logged once); `bare` or `bearer` sends only that form",
  },
  PROVIDER_RECEIPT_FORMAT: {
    meaning:
      "the receipt request's body (the document shows both): `auto` sends JSON, a form once when the provider refuses the content type (415, or a 400 that says so), and keeps the one it took (logged once); `json` or `form` sends only that",
  },
  PROVIDER_LIVENESS_ID_FIELD: {
    meaning:
      "the liveness request's id field (the document's sample says `correlation_id`, its table `correlationId`): `auto` sends `correlation_id`, asks once again with `correlationId` when a 400 names the field, and keeps the one the provider took; either spelling sends only that",
  },
  WEBHOOK_SECRET: { meaning: 'secret path segment of the webhook URLs (16+ characters)', secret: true },
  WEBHOOK_PARTNER_ID: { meaning: 'the partner id the provider must send back in every webhook' },
  API_PIX_BASE_URL: {
    meaning:
      "the API Pix connector: the base URL (https, up to the version, e.g. `https://pix.example.com/api/v2`) of a PSP speaking the Central Bank's API Pix, which collects deposits and returns them, over OAuth2 client credentials and mutual TLS ([Connectors](connectors.md)). Set, it needs `API_PIX_CLIENT_ID`, `API_PIX_CLIENT_SECRET` (or `API_PIX_CLIENT_SECRET_FILE`), `API_PIX_CERT_FILE`, `API_PIX_KEY_FILE` and `API_PIX_PIX_KEY` too, and the worker routes deposits to it as `api-pix` where the rules policy's `deposits.routing.connectors` names it ([Routing deposits](rules.md#routing-deposits))",
    shownDefault: 'none: no API Pix connector',
  },
  API_PIX_TOKEN_URL: {
    meaning: "the PSP's OAuth2 token endpoint (https)",
    shownDefault: '`API_PIX_BASE_URL`/oauth/token',
  },
  API_PIX_CLIENT_ID: { meaning: "pixflow's OAuth2 client id at the PSP", shownDefault: 'none' },
  API_PIX_CLIENT_SECRET: {
    meaning: "pixflow's OAuth2 client secret at the PSP; never logged",
    shownDefault: 'none',
  },
  API_PIX_CLIENT_SECRET_FILE: {
    meaning: 'a file holding that secret instead (a container secret); set one of the two, not both',
    shownDefault: 'none',
  },
  API_PIX_CERT_FILE: {
    meaning: "PEM file of pixflow's client certificate the PSP issued or accepts (mutual TLS)",
    shownDefault: 'none',
  },
  API_PIX_KEY_FILE: { meaning: "PEM file of that certificate's private key", shownDefault: 'none' },
  API_PIX_CA_FILE: {
    meaning: "PEM file of the CA that signed the PSP's server certificate: then only it is trusted",
    shownDefault: 'none: the usual public roots',
  },
  API_PIX_PIX_KEY: {
    meaning: "the account's Pix key at the PSP: every charge (cob) is made to it",
    shownDefault: 'none',
  },
  API_PIX_EXPIRY_SECONDS: {
    meaning: 'how long an API Pix charge can be paid, in seconds (60 to 86400)',
    shownDefault: '1800',
  },
  API_PIX_WEBHOOK_PORT: {
    meaning:
      "port of the API process's second listener, where a PSP speaking the API Pix posts its webhooks (`<listener>/webhooks/api-pix/<path secret>/pix`), HTTPS with mutual TLS ([API Pix webhooks](connectors.md#api-pix-webhooks)); needs the three files below",
    shownDefault: 'none: no listener',
  },
  API_PIX_WEBHOOK_CERT_FILE: {
    meaning: "PEM file of pixflow's server certificate on that listener",
    shownDefault: 'none',
  },
  API_PIX_WEBHOOK_KEY_FILE: { meaning: "PEM file of that certificate's private key", shownDefault: 'none' },
  API_PIX_WEBHOOK_CLIENT_CA_FILE: {
    meaning:
      "PEM file of the CA that signs the default brand's PSP's webhook client certificate, trusted too for every API Pix account that names no CA of its own; the listener lets in only certificates of these CAs and of the CAs the brands' accounts name ([brands](brands.md))",
    shownDefault: 'none',
  },
  API_PIX_WEBHOOK_SECRET: {
    meaning:
      "secret path segment of the default brand's API Pix webhook URL (16+ characters), a second factor beside the certificate; unset, the listener takes only the brands' own API Pix accounts' callbacks, each under its own webhook secret ([brands](brands.md))",
    shownDefault: 'none',
  },
  API_PIX_WEBHOOK_URL: {
    meaning:
      'the public URL of that listener with its path secret, `https://<host>:<port>/webhooks/api-pix/<API_PIX_WEBHOOK_SECRET>`: the worker registers it at the PSP for `API_PIX_PIX_KEY` at start (`PUT /webhook/{chave}`, which posts to it + `/pix`) unless the PSP already has it; only its origin is logged',
    shownDefault: 'none: registered by hand at the PSP',
  },
  CODEC_KEYS: {
    meaning:
      'payload encryption keys, `id:base64(32 bytes)` comma-separated; keep old ids while histories need them',
    secret: true,
  },
  CODEC_ACTIVE_KEY_ID: {
    meaning: 'the key new payloads are encrypted with',
    defaultNote: "`npm start`: its key's id",
  },
  CODEC_TOKENS: {
    meaning:
      "Bearer tokens accepted by `/codec/encode` and `/codec/decode` (the Temporal UI's codec endpoint)",
    defaultNote: '`npm start`: its own',
  },
  CODEC_CORS_ORIGINS: {
    meaning: 'browser origins allowed to call `/codec/*`',
    shownDefault: 'the local UI on `TEMPORAL_UI_PORT` (http://127.0.0.1:8233, http://localhost:8233)',
  },
  CODEC_TRUST_LOOPBACK_UI: {
    meaning: 'let the local UI decode without a token, from loopback only',
    defaultNote: '`npm start`: true',
  },
  PII_HASH_KEY: {
    meaning: 'key of the CPF hash kept in Postgres and search attributes (16+ characters)',
    secret: true,
  },
  LIVENESS_LINK_TTL_MS: {
    meaning:
      'how long onboarding reuses a liveness link, and how long a biometric identification waits for its outcome',
    shownDefault: '1800000 (30 min)',
  },
  ONBOARDING_DEADLINE_MS: {
    meaning: 'an abandoned onboarding ends `expired` after this',
    shownDefault: '604800000 (7 days)',
  },
  POLL_SCHEDULE_MS: {
    meaning:
      'reconciliation: when a deposit waiting for payment, or a payout for its outcome, is looked up, ms after it started waiting and between looks; the last one repeats',
    shownDefault: '30000,120000,600000,3600000',
  },
  RECONCILE_MAX_PER_SECOND: {
    meaning:
      'reconciliation: provider look-ups a second, at most (one sweep runs at a time, whatever the number of workers)',
  },
  RECONCILE_INTERVAL_MS: {
    meaning: 'reconciliation: how often the sweep looks for due flows (at once again while it is behind)',
  },
  SANDBOX_DEPOSIT_EXPIRY_MS: { meaning: "the sandbox's QR code lifetime" },
  SANDBOX_LIVENESS_URL_VALIDITY_MS: { meaning: "the sandbox's liveness link lifetime" },
  SANDBOX_NOTIFICATION_URL: {
    meaning:
      "where the sandbox sends its deposit, payout and liveness notifications from its start, with `WEBHOOK_PARTNER_ID` as their partner id: the API's ingress, `<API>/webhooks/provider/<WEBHOOK_SECRET>` (`POST /sandbox/notifications` changes it while it runs; `POST /sandbox/reset` goes back to it)",
    shownDefault:
      'none: no notifications until `POST /sandbox/notifications` (`npm start` registers its API)',
  },
  SANDBOX_DIALECT: {
    meaning:
      "which side of each point the provider's document leaves open the sandbox answers, strictly: `doc` (the document's side), `other` (the other side a provider may take), or a comma list of `point=side` such as `inquiry.status=other,auth.header=other` (the rest on `doc`); an unknown point or side stops the sandbox naming it ([Sandbox](sandbox.md#dialect); `PUT /sandbox/dialect` changes it while it runs, `POST /sandbox/reset` goes back to it)",
    shownDefault: '`doc`',
  },
  SANDBOX_API_PIX_PORT: {
    meaning:
      'port of the API Pix emulation (`sandbox/api-pix/main.ts`), HTTPS requiring a client certificate of its CA ([Sandbox](sandbox.md#api-pix))',
  },
  SANDBOX_API_PIX_PKI_DIR: {
    meaning:
      "folder where the API Pix emulation makes (or keeps) its test certificates with the machine's openssl: the PSP's CA, its server, webhook and merchant certificates, and pixflow's CA with the webhook listener's",
    shownDefault: '`<DATA_DIR>/api-pix-pki`',
  },
  INBOX_RELAY_INTERVAL_MS: { meaning: 'how often the relay looks for undelivered webhook notifications' },
  INBOX_RETRY_MAX_MS: { meaning: 'longest back-off between delivery attempts of one notification' },
  INBOX_GIVE_UP_MS: { meaning: 'a notification whose workflow never appears is given up after this' },
  INBOX_LIVENESS_REQUEST_WAIT_MS: {
    meaning:
      "how long a liveness callback that names no known request waits for the request's record before it is kept unmatched",
  },
  INBOX_COALESCE_MS: {
    meaning:
      "an identical notification within this long of the last one's signal is signalled when the window ends (one signal per window in a storm of copies)",
  },
  PAYOUT_AUTHORIZATION_URL: rule({
    meaning:
      "the operator's backend, asked before each payout is sent (a signed POST, [Payout controls](payout-controls.md#the-operators-authorization)); unset: not asked. The provider sandbox emulates one at `/operator/payout-authorization` ([test amounts](sandbox.md#payout-authorization-test-amounts)); `npm start` does not ask it unless this points there",
    shownDefault: 'none',
  }),
  PAYOUT_AUTHORIZATION_SECRET: {
    // `npm start` keeps the public value: the sandbox's emulation verifies with the same one.
    shownDefault: "a public development value, the sandbox's emulation's too (production requires yours)",
    meaning:
      "signs pixflow's requests to `PAYOUT_AUTHORIZATION_URL` (`whsec_<base64>`, Standard Webhooks); required in production when that is set, and refused there when its key material is public, `whsec_` or not",
    secret: true,
  },
  PAYOUT_AUTHORIZATION_TIMEOUT_MS: {
    meaning: "one attempt's bound on the authorization's answer (three attempts at most)",
  },
  ELIGIBILITY_URL: rule({
    meaning:
      "the operator's eligibility service, which asks the registry of impeded people ([eligibility](rules.md#eligibility)), before a deposit and at onboarding; unset: no one is screened, and production refuses to start unless `ELIGIBILITY_SCREENED_ELSEWHERE=true`",
    shownDefault: 'none',
    defaultNote: "`npm start` with its sandbox: the sandbox's emulation",
  }),
  ELIGIBILITY_SECRET: {
    // `npm start` keeps the public value: the sandbox's emulation verifies with the same one.
    shownDefault: "a public development value, the sandbox's emulation's too (production requires yours)",
    meaning:
      "signs pixflow's requests to the eligibility service (`whsec_<base64>`, Standard Webhooks); required in production when `ELIGIBILITY_URL` is set, and refused there when its key material is public, `whsec_` or not",
    secret: true,
  },
  ELIGIBILITY_SCREENED_ELSEWHERE: rule({
    meaning:
      'production without `ELIGIBILITY_URL`: true says the operator screens every person against the registry elsewhere, and pixflow starts, saying at every start that it screens no one',
  }),
  ELIGIBILITY_TIMEOUT_MS: {
    meaning: "one attempt's bound on the eligibility service's answer (three attempts at most)",
  },
  ELIGIBILITY_RESCREEN_EVERY_MS: rule({
    meaning:
      'rescreening: how often the Temporal Schedule starts a pass over the active customers (a pass still running makes the next one skip)',
  }),
  ELIGIBILITY_RESCREEN_PER_SECOND: {
    meaning: 'rescreening: people screened a second, at most (one pass runs at a time, whatever the workers)',
  },
  ALERT_MONITOR: {
    meaning:
      'whether this API process runs the alert monitor, which reads the events and raises monitoring alerts (several may: one reads at a time) ([Monitoring](monitoring.md))',
  },
  ALERT_MONITOR_INTERVAL_MS: {
    meaning: 'how often the alert monitor reads the events written since its last pass',
  },
  WEBHOOK_ALLOW_LOOPBACK: {
    meaning: 'webhook endpoints may be loopback addresses, over http too: development only',
    defaultNote: '`npm start`: true',
  },
  WEBHOOK_ALLOWED_CIDRS: {
    meaning: 'private ranges webhook endpoints may be in (your own network), comma-separated CIDRs',
  },
  WEBHOOK_TIMEOUT_MS: { meaning: 'how long a delivery attempt waits for an answer' },
  WEBHOOK_RETRY_SCHEDULE_MS: {
    meaning: "waits between a delivery's attempts (±20%); after the last, it is given up",
    shownDefault: '5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 20 h, 24 h',
  },
  WEBHOOK_DISABLE_AFTER_MS: {
    meaning: 'an endpoint whose every attempt failed this long is disabled (a 410 disables it at once)',
  },
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: { meaning: 'deliveries in flight to one endpoint, per API process' },
  WEBHOOK_SECRET_OVERLAP_MS: {
    meaning: 'how long a rotated-out signing secret keeps signing beside the new one',
  },
  EVENTS_RETENTION_MS: { meaning: 'events older than this are deleted, with their deliveries and attempts' },
  EVENTS_RELAY_INTERVAL_MS: {
    meaning:
      'the least time between two passes of the events relay that new events wake (it listens for them, and looks every second when none come); how often it polls while it cannot listen',
  },
  EVENTS_RELAY: {
    meaning: 'whether this API process runs the events relay (several may: they share the work)',
  },
  LOG_LEVEL: { meaning: 'pino level' },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    meaning:
      "OTLP/HTTP collector base URL; when set, the API and worker export OpenTelemetry traces (request → workflow → activity → provider call) to `<url>/v1/traces` as `pixflow-api` and `pixflow-worker`; the worker's workflow code then carries the tracing interceptors, so a worker with tracing is a build of its own (turn it on for every worker of a build)",
    shownDefault: 'none (tracing off)',
  },
};

const DURATIONS: Array<[number, string]> = [
  [86_400_000, 'day'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
];

/** 28800000 → "28800000 (8 h)"; whole units only, as people say them. */
function withDuration(ms: number): string {
  for (const [unit, name] of DURATIONS) {
    if (ms >= unit && ms % unit === 0) {
      const n = ms / unit;
      return `${ms} (${n} ${name === 'day' ? (n === 1 ? 'day' : 'days') : name})`;
    }
  }
  return String(ms);
}

const reais = (centavos: number) =>
  `R$ ${new Intl.NumberFormat('pt-BR', { minimumFractionDigits: 2 }).format(centavos / 100)}`;

/** The default as the docs show it, from what the schema gives an unset variable. */
export function shownDefaultOf(name: string, field: z.ZodType, doc: VariableDoc): string {
  if (doc.shownDefault) return doc.shownDefault;
  const note = doc.defaultNote ? ` (${doc.defaultNote})` : '';
  if (doc.secret) return 'a public development value (`npm start`: its own; production requires yours)';
  const parsed = field.safeParse(undefined);
  const value = parsed.success ? parsed.data : undefined;
  let shown: string;
  if (value === undefined) shown = 'none';
  else if (typeof value === 'number' && name.endsWith('_MS')) shown = withDuration(value);
  else if (typeof value === 'number' && name.endsWith('_CENTAVOS')) shown = `${value} (${reais(value)})`;
  else if (Array.isArray(value)) shown = value.length ? value.join(',') : 'none';
  else shown = String(value);
  return `${shown}${note}`;
}

export const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The configuration reference: every variable of the schema, its default and its meaning. */
export function configReferenceTable(schema: z.ZodObject = envSchema): string {
  const docs = configReference as Record<string, VariableDoc>;
  const rows = Object.keys(docs)
    .filter((name) => name in schema.shape)
    .map((name) => {
      const doc = docs[name] as VariableDoc;
      const field = schema.shape[name] as z.ZodType;
      return `| \`${name}\` | ${cell(shownDefaultOf(name, field, doc))} | ${cell(doc.meaning)} |`;
    });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** A variable's default as the reference shows it. */
export const shownDefault = (name: keyof typeof envSchema.shape): string =>
  shownDefaultOf(name, envSchema.shape[name], configReference[name]);
