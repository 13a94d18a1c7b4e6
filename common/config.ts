// Over 400 lines on purpose: one schema, so every variable is checked the same way and
// docs/configuration.md is generated from it.
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { CodecKeyError, parseCodecKeys } from './codec';
import {
  productionSecretProblems,
  productionSettingProblems,
  SECRET_VARIABLES,
  type SecretVariable,
} from './production-secrets';

// One place parses process.env. Every process (api, worker, sandbox, start) calls loadConfig()
// and fails fast with one line per wrong variable instead of failing later somewhere deep.
// The secrets' defaults below are public, for development and tests: NODE_ENV=production
// refuses them, and any other value from this repository (common/production-secrets.ts).

const port = z.coerce
  .number({ error: 'must be a port number' })
  .int('must be a whole number')
  .min(1, 'must be between 1 and 65535')
  .max(65535, 'must be between 1 and 65535');

/** A switch as the environment writes it (the rule variables' too, policy/seed.ts). */
export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\/[^\s]+$/.test(v), 'must be a postgres:// or postgresql:// URL');

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https:// URL' });

export const durationMs = z.coerce.number({ error: 'must be a number of milliseconds' }).int().positive();

const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** Webhook inbox defaults, here once for the variables below and for ingress/deliver.ts's
 * options when a caller (a test, the relay) sets none. */
export const INBOX_DEFAULTS = {
  relayIntervalMs: 1_000,
  retryMaxMs: 60_000,
  giveUpMs: 24 * 3600_000,
  coalesceMs: 1_000,
  livenessRequestWaitMs: 10_000,
} as const;

/** Failed authentication's budget per address (docs/security.md), also for an ingress a test mounts alone. */
export const AUTH_FAILURE_DEFAULTS = { limit: 20, windowMs: 5 * 60_000 } as const;

/** Outbound events' defaults (docs/api.md, Events). */
export const EVENTS_DEFAULTS = {
  // About three days of retries after the first attempt, with jitter (Standard Webhooks' schedule,
  // stretched): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 20 h, 24 h.
  retryScheduleMs: [
    5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 72_000_000, 86_400_000,
  ],
  timeoutMs: 10_000,
  disableAfterMs: 5 * 24 * 3600_000,
  concurrencyPerEndpoint: 4,
  secretOverlapMs: 24 * 3600_000,
  retentionMs: 30 * 24 * 3600_000,
  relayIntervalMs: 200,
  // While the relay listens for new events: how long it waits when none come.
  relayIdleMs: 1_000,
} as const;

/** The eligibility service's signing secret in development: public, like the other defaults. */
export const ELIGIBILITY_DEV_SECRET = 'whsec_ZGV2LWVsaWdpYmlsaXR5LXNlY3JldC1jaGFuZ2UtbWU=';

/** The payout authorization's signing secret in development: public, like the other defaults. */
export const PAYOUT_AUTHORIZATION_DEV_SECRET = 'whsec_ZGV2LXBheW91dC1hdXRob3JpemF0aW9uLWNoYW5nZS1tZQ==';

/**
 * The sandbox's dialect: `doc` or `other` (every open point on that side), or a comma list of
 * `point=side` (the rest on `doc`, or on a bare `doc`/`other` in the list). Which point ids exist
 * is the sandbox's to check (sandbox/dialect.ts): it refuses to start naming an unknown one.
 */
const sandboxDialect = z.string().transform((v, check) => {
  const dialect: { default: 'doc' | 'other'; points: Record<string, 'doc' | 'other'> } = {
    default: 'doc',
    points: {},
  };
  const isSide = (s: string): s is 'doc' | 'other' => s === 'doc' || s === 'other';
  for (const item of v.split(',').map((s) => s.trim())) {
    const [point, side, ...more] = item.split('=').map((s) => s.trim());
    if (more.length === 0 && side === undefined && point && isSide(point)) dialect.default = point;
    else if (more.length === 0 && point && side !== undefined && isSide(side)) dialect.points[point] = side;
    else {
      check.addIssue({
        code: 'custom',
        message: `"${item}" is not doc, other or point=doc|other (e.g. inquiry.status=other,auth.header=other)`,
      });
      return z.NEVER;
    }
  }
  return dialect;
});

const cidr = z
  .string()
  .refine((v) => ipaddr.isValidCIDR(v), 'must be CIDR ranges, e.g. 10.1.0.0/16,fd00::/8');

export const envSchema = z.object({
  /** production: every secret the process reads must be its own (docs/security.md). */
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().min(1).default('.data'),

  /** Interface the API, worker health and sandbox bind to; 0.0.0.0 inside containers. */
  HTTP_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(3000),
  SANDBOX_PORT: port.default(4010),
  /** Sandbox: lifetime of a deposit QR code and of a liveness link (shorter in tests and demos). */
  SANDBOX_DEPOSIT_EXPIRY_MS: durationMs.default(30 * 60_000),
  SANDBOX_LIVENESS_URL_VALIDITY_MS: durationMs.default(30 * 60_000),
  /** Sandbox: where it sends every notification from its start (the API's ingress URL), with WEBHOOK_PARTNER_ID. */
  SANDBOX_NOTIFICATION_URL: httpUrl.optional(),
  /** Sandbox: which side of each point the provider's document leaves open it answers (docs/sandbox.md, Dialect). */
  SANDBOX_DIALECT: sandboxDialect.prefault('doc'),
  /** The API Pix emulation (docs/sandbox.md, API Pix): its mutual TLS port, and where it keeps its test certificates. */
  SANDBOX_API_PIX_PORT: port.default(4011),
  SANDBOX_API_PIX_PKI_DIR: z.string().min(1).optional(),
  /** Bootstrap API keys, comma-separated: each holds every scope (records: `npm run operator -- key`). */
  API_KEYS: csv.optional(),
  /** Requests per minute per API key on /v1 (per key record, whichever of its secrets); 0 turns the limit off. */
  API_RATE_LIMIT_PER_MINUTE: z.coerce.number({ error: 'must be a number' }).int().min(0).default(600),
  /** How long an API process trusts what it read of a key record: a revocation or new scopes apply within this. */
  API_KEY_CACHE_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(0)
    .max(60_000, 'must be at most 60000 (one minute)')
    .default(5_000),
  /** Failed authentications an address may make per AUTH_FAILURE_WINDOW_MS (API keys, and ingress secrets, each). */
  AUTH_FAILURE_LIMIT: z.coerce
    .number({ error: 'must be a number' })
    .int()
    .min(1)
    .default(AUTH_FAILURE_DEFAULTS.limit),
  AUTH_FAILURE_WINDOW_MS: durationMs.default(AUTH_FAILURE_DEFAULTS.windowMs),
  WORKER_HTTP_PORT: port.default(3001),
  /** Where the Temporal SDK exposes its own Prometheus metrics (merged into the worker's /metrics). */
  WORKER_SDK_METRICS_PORT: port.default(9464),
  /** Worker tuning; unset: the Temporal SDK's defaults, except the cache. */
  // Enough to keep a deposit cached until its payer pays (most pay within minutes of the QR) at a
  // busy rate: an evicted one is replayed from its history when its payment comes. Bounded rather
  // than the SDK's default (derived from the heap limit), which many open flows would fill. Unset,
  // it follows the worker's memory (common/worker-tuning.ts), this default when that is unknown.
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).default(1000),
  /** Memory the worker is given, in MiB; unset: its cgroup's limit when it has one. Sizes the cache. */
  WORKER_MEMORY_MIB: z.coerce
    .number({ error: 'must be a number of MiB' })
    .int()
    .min(768, 'must be at least 768 (the worker alone holds some 560 MiB)')
    .optional(),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().min(2).optional(),
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).optional(),
  /** The Worker Deployment the worker belongs to (Worker Versioning, docs/versioning.md). */
  WORKER_DEPLOYMENT_NAME: z.string().min(1).max(200).default('pixflow'),
  /** The worker's build id; unset: <package version>+<git commit>, or a hash of the workflow code without git. */
  WORKER_BUILD_ID: z.string().min(1).max(200).optional(),
  /** Whether a worker makes its build the deployment's current version when it is the newest registered. */
  WORKER_PROMOTE_NEWEST: bool.default(true),

  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('pixflow'),
  TEMPORAL_UI_PORT: port.default(8233),
  /** Port of the embedded dev server `npm start` runs when TEMPORAL_ADDRESS is not set. */
  PIXFLOW_TEMPORAL_PORT: port.default(7233),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  /** The CA the server's certificate is checked against, for a private CA; unset: the system's roots. */
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  /** The name the server's certificate is checked for, when it is not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  TEMPORAL_API_KEY: z.string().optional(),
  /** The API's bound on a request's Temporal calls: past it, 503 with Retry-After (the flow goes on). */
  TEMPORAL_CALL_TIMEOUT_MS: durationMs.default(8_000),

  DATABASE_URL: postgresUrl.optional(),
  EMBEDDED_PG_PORT: port.default(5433),

  PROVIDER_BASE_URL: httpUrl.optional(),
  PROVIDER_AUTH_URL: httpUrl.optional(),
  PROVIDER_LIVENESS_URL: httpUrl.optional(),
  PROVIDER_CLIENT_ID: z.string().min(1).default('sandbox-client'),
  PROVIDER_CLIENT_SECRET: z.string().min(1).default('sandbox-secret'),
  PROVIDER_API_KEY: z.string().min(1).default('sandbox-api-key'),
  PROVIDER_MERCHANT: z.string().min(1).default('sandbox-merchant'),
  PROVIDER_TIMEOUT_MS: durationMs.default(10_000),
  /** The token's Authorization form: auto (the document's per endpoint, the other on a refusal, learned), bare or bearer. */
  PROVIDER_AUTH_HEADER: z.enum(['auto', 'bare', 'bearer']).default('auto'),
  /** The receipt request's body: auto (JSON, a form when the content type is refused, learned), json or form. */
  PROVIDER_RECEIPT_FORMAT: z.enum(['auto', 'json', 'form']).default('auto'),
  /** The liveness request's id field: auto (correlation_id, correlationId once when refused, learned) or either spelling. */
  PROVIDER_LIVENESS_ID_FIELD: z.enum(['auto', 'correlation_id', 'correlationId']).default('auto'),

  WEBHOOK_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .default('dev-webhook-secret-change-me'),
  WEBHOOK_PARTNER_ID: z.string().min(1).default('pixflow'),
  /**
   * A PSP speaking the Central Bank's API Pix posts its webhooks to a listener of its own in the
   * API process, over mutual TLS (docs/connectors.md, API Pix webhooks); unset: no listener.
   */
  API_PIX_WEBHOOK_PORT: port.optional(),
  API_PIX_WEBHOOK_CERT_FILE: z.string().min(1).optional(),
  API_PIX_WEBHOOK_KEY_FILE: z.string().min(1).optional(),
  API_PIX_WEBHOOK_CLIENT_CA_FILE: z.string().min(1).optional(),
  API_PIX_WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Where the PSP is to post the account's webhooks (this listener's public URL, with its path
   * secret): the worker registers it for API_PIX_PIX_KEY at start when it differs from the PSP's.
   */
  API_PIX_WEBHOOK_URL: httpsUrl.optional(),
  /**
   * The API Pix connector (docs/connectors.md): a PSP speaking the Central Bank's API Pix, over
   * OAuth2 client credentials and mutual TLS, that collects deposits and returns them. All of its
   * required settings or none (apiPixProblems); unset: deposits go to the first provider alone.
   */
  API_PIX_BASE_URL: httpsUrl.optional(),
  API_PIX_TOKEN_URL: httpsUrl.optional(),
  API_PIX_CLIENT_ID: z.string().min(1).optional(),
  API_PIX_CLIENT_SECRET: z.string().min(1).optional(),
  /** The client secret read from a file instead (a container's secret), never both. */
  API_PIX_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  API_PIX_CERT_FILE: z.string().min(1).optional(),
  API_PIX_KEY_FILE: z.string().min(1).optional(),
  API_PIX_CA_FILE: z.string().min(1).optional(),
  API_PIX_PIX_KEY: z.string().min(1).optional(),
  API_PIX_EXPIRY_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be whole seconds')
    .min(60, 'must be at least 60')
    .max(86_400, 'must be at most 86400 (a day)')
    .optional(),
  /** Webhook inbox relay: how often it looks for pending rows, the longest retry back-off, and
   * how long a notification may wait for its workflow to appear before it is given up. */
  INBOX_RELAY_INTERVAL_MS: durationMs.default(INBOX_DEFAULTS.relayIntervalMs),
  INBOX_RETRY_MAX_MS: durationMs.default(INBOX_DEFAULTS.retryMaxMs),
  INBOX_GIVE_UP_MS: durationMs.default(INBOX_DEFAULTS.giveUpMs),
  /** An identical notification within this long of the last one's signal is signalled when it ends. */
  INBOX_COALESCE_MS: durationMs.default(INBOX_DEFAULTS.coalesceMs),
  /** A liveness callback naming no request pixflow made waits this long for the request's record, then stays unsignalled. */
  INBOX_LIVENESS_REQUEST_WAIT_MS: durationMs.default(INBOX_DEFAULTS.livenessRequestWaitMs),
  /** Payload encryption keys `id:base64(32 bytes)`, comma-separated; the dev key is public, set your own. */
  CODEC_KEYS: z.string().min(1).default('dev1:ZGV2LW9ubHkta2V5LWRvLW5vdC11c2UtaW4tcHJvZCE='),
  CODEC_ACTIVE_KEY_ID: z.string().min(1).default('dev1'),
  /** Tokens the Temporal UI (or an operator) sends to /codec/* as `Authorization: Bearer <token>`. */
  CODEC_TOKENS: csv.optional(),
  /** Embedded stack: let the local Temporal UI use /codec/* from loopback without a token. */
  CODEC_TRUST_LOOPBACK_UI: bool.default(false),
  /** Origins allowed to call /codec/* from a browser (the Temporal UI); unset: the local UI on
   * TEMPORAL_UI_PORT (loadConfig). */
  CODEC_CORS_ORIGINS: csv.optional(),
  /** Key of the CPF hash kept in Postgres and search attributes (never the CPF itself). */
  PII_HASH_KEY: z.string().min(16, 'must be at least 16 characters').default('dev-pii-hash-key-change-me'),
  /** The flows' waits; unset: the flows' own defaults (contracts/flow.ts DEFAULT_TIMINGS). */
  LIVENESS_LINK_TTL_MS: durationMs.optional(),
  ONBOARDING_DEADLINE_MS: durationMs.optional(),
  /**
   * Reconciliation: when a deposit waiting for payment, or a payout for its outcome, is looked up
   * at the provider, ms after it started waiting and between looks, comma-separated; the last
   * repeats. Unset: 30 s, 2 min, 10 min, then hourly.
   */
  POLL_SCHEDULE_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be comma-separated milliseconds, e.g. 5000,10000,30000')
    .transform((v) => v.split(',').map(Number))
    .optional(),
  /** Reconciliation: provider look-ups a second, at most (one sweep runs at a time, whatever the workers). */
  RECONCILE_MAX_PER_SECOND: z.coerce
    .number({ error: 'must be a number' })
    .positive('must be above 0')
    .default(25),
  /** Reconciliation: how often the sweep looks for due flows. */
  RECONCILE_INTERVAL_MS: durationMs.default(10_000),
  /** The operator's backend, asked before each payout is sent; unset: not asked. */
  PAYOUT_AUTHORIZATION_URL: httpUrl.optional(),
  /** Signs pixflow's requests to PAYOUT_AUTHORIZATION_URL (Standard Webhooks, `whsec_<base64>`). */
  PAYOUT_AUTHORIZATION_SECRET: z
    .string()
    .regex(/^(whsec_)?[A-Za-z0-9+/]{22,}={0,2}$/, 'must be whsec_ and at least 16 bytes in base64')
    .default(PAYOUT_AUTHORIZATION_DEV_SECRET),
  /** One attempt's bound on the authorization's answer (three attempts at most). */
  PAYOUT_AUTHORIZATION_TIMEOUT_MS: durationMs.default(3_000),
  /**
   * The operator's eligibility service (docs/rules.md, Eligibility). Unset, no one is screened:
   * production then refuses to start unless ELIGIBILITY_SCREENED_ELSEWHERE is true.
   */
  ELIGIBILITY_URL: httpUrl.optional(),
  /** Production without ELIGIBILITY_URL: the operator screens every person elsewhere (said at every start). */
  ELIGIBILITY_SCREENED_ELSEWHERE: bool.default(false),
  /** Signs pixflow's requests to the eligibility service (Standard Webhooks, `whsec_<base64>`). */
  ELIGIBILITY_SECRET: z
    .string()
    .regex(/^(whsec_)?[A-Za-z0-9+/]{22,}={0,2}$/, 'must be whsec_ and at least 16 bytes in base64')
    .default(ELIGIBILITY_DEV_SECRET),
  /** One attempt's bound on the eligibility service's answer (three attempts at most). */
  ELIGIBILITY_TIMEOUT_MS: durationMs.default(3_000),
  /** Rescreening: how often the schedule starts a pass over the active customers. */
  ELIGIBILITY_RESCREEN_EVERY_MS: durationMs.default(24 * 3_600_000),
  /** Rescreening: people screened a second, at most (one pass runs at a time, whatever the workers). */
  ELIGIBILITY_RESCREEN_PER_SECOND: z.coerce
    .number({ error: 'must be a number' })
    .positive('must be above 0')
    .default(10),
  /** Whether this API process runs the alert monitor (any number may: one reads at a time). */
  ALERT_MONITOR: bool.default(true),
  /** How often the alert monitor reads the events written since its last pass. */
  ALERT_MONITOR_INTERVAL_MS: durationMs.default(2_000),
  /** Webhook endpoints may be loopback (http too): for development, never in production. */
  WEBHOOK_ALLOW_LOOPBACK: bool.default(false),
  /** Private ranges webhook endpoints may be in (the operator's own network), comma-separated CIDRs. */
  WEBHOOK_ALLOWED_CIDRS: csv.pipe(z.array(cidr)).default([]),
  /** Waits between a delivery's attempts, comma-separated ms; after the last, the delivery gives up. */
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be comma-separated milliseconds, e.g. 5000,300000')
    .transform((v) => v.split(',').map(Number))
    .optional(),
  WEBHOOK_TIMEOUT_MS: durationMs.default(EVENTS_DEFAULTS.timeoutMs),
  /** An endpoint whose every attempt failed this long (or that answered 410) is disabled. */
  WEBHOOK_DISABLE_AFTER_MS: durationMs.default(EVENTS_DEFAULTS.disableAfterMs),
  /** Deliveries in flight to one endpoint at once, per API process. */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(EVENTS_DEFAULTS.concurrencyPerEndpoint),
  /** How long a rotated-out secret keeps signing beside the new one. */
  WEBHOOK_SECRET_OVERLAP_MS: durationMs.default(EVENTS_DEFAULTS.secretOverlapMs),
  /** Events older than this are deleted (GET /v1/events reaches back this far). */
  EVENTS_RETENTION_MS: durationMs.default(EVENTS_DEFAULTS.retentionMs),
  /** The least time between the relay's passes new events wake; its polling while it cannot listen. */
  EVENTS_RELAY_INTERVAL_MS: durationMs.default(EVENTS_DEFAULTS.relayIntervalMs),
  /** Whether this API process runs the events relay (any number may: they share the work). */
  EVENTS_RELAY: bool.default(true),
  /** Back office: signs its session cookie; the dev value is public, set your own. */
  BACKOFFICE_SESSION_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .default('dev-backoffice-session-secret-change-me'),
  /** Back office: a session ends this long after its last request. */
  BACKOFFICE_SESSION_TTL_MS: durationMs.default(8 * 3_600_000),
  /** Back office: a session ends this long after signing in, however busy it was. */
  BACKOFFICE_SESSION_MAX_AGE_MS: durationMs.default(12 * 3_600_000),
  /** Back office: the session cookie is Secure (https only); unset: unless HTTP_HOST is loopback. */
  BACKOFFICE_SECURE_COOKIE: bool.optional(),
  /**
   * Express's `trust proxy`: how many proxies in front (a number), or which ones (comma-separated
   * addresses, subnets, `loopback`); unset: none. Behind TLS that ends at a proxy, the back
   * office's Secure cookie and the per-address limits (sign-in, failed authentication) need it.
   */
  TRUST_PROXY: z
    .string()
    .transform((v) => (/^\d+$/.test(v) ? Number(v) : v))
    .optional(),
  /** Back office: how many sign-ins an address may try per 15 minutes. */
  BACKOFFICE_SIGNIN_ATTEMPTS: z.coerce.number().int().min(1).default(10),
  /** Where case pages link to the Temporal UI; unset: the local UI on TEMPORAL_UI_PORT. */
  TEMPORAL_UI_URL: httpUrl.optional(),
  /** OTLP/HTTP collector base URL (spans go to <url>/v1/traces); tracing is off when unset. */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
});

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Names whose values a problem line never shows. */
const isSecretName = (name: string) => /SECRET|_KEYS?$|TOKENS?$/.test(name);

export interface LoadConfigOptions {
  /** The secrets the process reads, each required under NODE_ENV=production; default all. */
  secrets?: readonly SecretVariable[];
}

/**
 * Whether the process screens people (the API and the worker, which key CPFs with PII_HASH_KEY,
 * unlike the sandbox and the migrations): production then needs an eligibility service.
 */
const screensPeople = (opts: LoadConfigOptions) =>
  (opts.secrets ?? SECRET_VARIABLES).includes('PII_HASH_KEY');

export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}) {
  // Empty strings mean "unset", as in most shells' `FOO= cmd`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  // One line per variable: a secret production refuses is not also reported as malformed.
  const secretProblems =
    cleaned.NODE_ENV === 'production'
      ? productionSecretProblems(cleaned, opts.secrets ?? SECRET_VARIABLES)
      : new Map<string, string>();
  // The settings beyond them (signing secrets, DATABASE_URL's password, the provider's): the same.
  const settingProblems =
    cleaned.NODE_ENV === 'production' ? productionSettingProblems(cleaned) : new Map<string, string>();
  const problems: string[] = [];
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      const name = String(i.path[0] ?? '?');
      if (secretProblems.has(name) || settingProblems.has(name)) continue;
      const raw = cleaned[name];
      const shown =
        raw === undefined
          ? '(unset)'
          : isSecretName(name)
            ? '(not shown)'
            : JSON.stringify(raw.length > 60 ? `${raw.slice(0, 57)}...` : raw);
      problems.push(`${name}=${shown}: ${i.message}`);
    }
  }
  let codecKeys: ReturnType<typeof parseCodecKeys> | undefined;
  if (parsed.success) {
    try {
      codecKeys = parseCodecKeys(parsed.data.CODEC_KEYS, parsed.data.CODEC_ACTIVE_KEY_ID);
    } catch (err) {
      if (!(err instanceof CodecKeyError)) throw err;
      if (!secretProblems.has('CODEC_KEYS'))
        problems.push(`CODEC_KEYS / CODEC_ACTIVE_KEY_ID: ${err.message}`);
    }
  }
  problems.push(...settingProblems.values());
  if (
    parsed.success &&
    cleaned.NODE_ENV === 'production' &&
    screensPeople(opts) &&
    !parsed.data.ELIGIBILITY_URL &&
    !parsed.data.ELIGIBILITY_SCREENED_ELSEWHERE
  )
    problems.push(
      'ELIGIBILITY_URL: not set, so no one would be screened against the registry of impeded people; set it to your eligibility service (docs/rules.md, Eligibility), or ELIGIBILITY_SCREENED_ELSEWHERE=true if you screen every person elsewhere',
    );
  if (parsed.success) problems.push(...temporalTlsProblems(parsed.data, screensPeople(opts)));
  if (parsed.success) problems.push(...apiPixWebhookProblems(parsed.data));
  const apiPix = parsed.success ? apiPixSettings(parsed.data, problems) : undefined;
  problems.push(...secretProblems.values());
  if (!parsed.success || !codecKeys || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  const sandboxUrl = `http://127.0.0.1:${e.SANDBOX_PORT}`;
  // Without TEMPORAL_ADDRESS, everything talks to the embedded dev server.
  const temporalAddress = env.TEMPORAL_ADDRESS ? e.TEMPORAL_ADDRESS : `127.0.0.1:${e.PIXFLOW_TEMPORAL_PORT}`;
  return {
    ...e,
    TEMPORAL_ADDRESS: temporalAddress,
    // The UI `npm start` runs, on whichever port it was given: a fixed default would leave a UI
    // moved off 8233 unable to decode payloads.
    CODEC_CORS_ORIGINS: e.CODEC_CORS_ORIGINS ?? [
      `http://127.0.0.1:${e.TEMPORAL_UI_PORT}`,
      `http://localhost:${e.TEMPORAL_UI_PORT}`,
    ],
    codecKeys,
    // Unset: the worker sizes its cache from its memory (workerTuningOptions).
    WORKER_MAX_CACHED_WORKFLOWS:
      cleaned.WORKER_MAX_CACHED_WORKFLOWS === undefined ? undefined : e.WORKER_MAX_CACHED_WORKFLOWS,
    TEMPORAL_UI_URL: (e.TEMPORAL_UI_URL ?? `http://127.0.0.1:${e.TEMPORAL_UI_PORT}`).replace(/\/$/, ''),
    // A cookie over plain http is only safe where nothing but this machine can see it.
    BACKOFFICE_SECURE_COOKIE: e.BACKOFFICE_SECURE_COOKIE ?? !isLoopbackHost(e.HTTP_HOST),
    provider: {
      baseUrl: e.PROVIDER_BASE_URL ?? sandboxUrl,
      authUrl: e.PROVIDER_AUTH_URL ?? sandboxUrl,
      livenessUrl: e.PROVIDER_LIVENESS_URL ?? sandboxUrl,
      clientId: e.PROVIDER_CLIENT_ID,
      clientSecret: e.PROVIDER_CLIENT_SECRET,
      apiKey: e.PROVIDER_API_KEY,
      merchant: e.PROVIDER_MERCHANT,
      timeoutMs: e.PROVIDER_TIMEOUT_MS,
      authHeader: e.PROVIDER_AUTH_HEADER,
      receiptFormat: e.PROVIDER_RECEIPT_FORMAT,
      livenessIdField: e.PROVIDER_LIVENESS_ID_FIELD,
    },
    apiPix,
  };
}

export type Config = ReturnType<typeof loadConfig>;

/** The host of a `host:port` address (`[::1]:7233` too). */
function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1] as string;
  const parts = address.split(':');
  return parts.length === 2 ? (parts[0] as string) : address;
}

/** A Temporal reached without leaving this machine: 127.0.0.0/8, ::1, localhost. */
export const isLoopbackAddress = (address: string) => {
  const host = hostOf(address).toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
};

/**
 * A client certificate comes as a pair. Under NODE_ENV=production, the Temporal clients (the API
 * and the worker, the processes that read PII_HASH_KEY) talk to a Temporal off this machine only
 * with credentials: a client certificate (mutual TLS) or Temporal Cloud's API key. Loopback is
 * allowed without: nothing but this machine sees that traffic (npm start's own server, or a
 * local proxy or tunnel that carries TLS itself).
 */
function temporalTlsProblems(e: z.infer<typeof envSchema>, temporalClient: boolean): string[] {
  const problems: string[] = [];
  const hasCert = !!e.TEMPORAL_TLS_CERT_PATH;
  const hasKey = !!e.TEMPORAL_TLS_KEY_PATH;
  if (hasCert !== hasKey)
    problems.push(
      'TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: a client certificate needs both, the certificate and its key',
    );
  if (
    e.NODE_ENV === 'production' &&
    temporalClient &&
    !(hasCert && hasKey) &&
    !e.TEMPORAL_API_KEY &&
    !isLoopbackAddress(e.TEMPORAL_ADDRESS)
  )
    problems.push(
      `TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: unset, so pixflow would talk to Temporal at ${e.TEMPORAL_ADDRESS} without credentials; in production set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH to a client certificate the server requires (mutual TLS; TEMPORAL_TLS_CA_PATH for a private CA), or TEMPORAL_API_KEY for Temporal Cloud; only a Temporal on loopback may go without (docs/security.md)`,
    );
  return problems;
}

/**
 * The API Pix webhook listener takes all of its TLS files, or none. Its path secret,
 * API_PIX_WEBHOOK_SECRET, is the default brand's alone: without it the listener takes the
 * brands' own API Pix accounts' callbacks (docs/brands.md).
 */
function apiPixWebhookProblems(e: z.infer<typeof envSchema>): string[] {
  const needed = [
    'API_PIX_WEBHOOK_CERT_FILE',
    'API_PIX_WEBHOOK_KEY_FILE',
    'API_PIX_WEBHOOK_CLIENT_CA_FILE',
  ] as const;
  if (e.API_PIX_WEBHOOK_PORT === undefined) return [];
  const missing = needed.filter((name) => !e[name]);
  return missing.length
    ? [
        `API_PIX_WEBHOOK_PORT: set, so the API Pix webhook listener needs ${missing.join(', ')} too (pixflow's server certificate and key, the PSP's client CA)`,
      ]
    : [];
}

/** The API Pix connector's settings, as the worker builds it (the PEM files it reads at start). */
export interface ApiPixSettings {
  baseUrl: string;
  tokenUrl?: string;
  clientId: string;
  clientSecret: string;
  certFile: string;
  keyFile: string;
  caFile?: string;
  pixKey: string;
  expirySeconds?: number;
}

/** The API Pix connector's variables a deployment must set together (the others have defaults). */
const API_PIX_REQUIRED = [
  'API_PIX_BASE_URL',
  'API_PIX_CLIENT_ID',
  'API_PIX_CLIENT_SECRET',
  'API_PIX_CERT_FILE',
  'API_PIX_KEY_FILE',
  'API_PIX_PIX_KEY',
] as const;
const API_PIX_OPTIONAL = ['API_PIX_TOKEN_URL', 'API_PIX_CA_FILE', 'API_PIX_EXPIRY_SECONDS'] as const;

/**
 * The API Pix connector's settings when any of its variables is set: all the required ones, or
 * a problem naming those missing (pushed to `problems`); the secret from its file when
 * API_PIX_CLIENT_SECRET_FILE names one. None set: undefined.
 */
function apiPixSettings(e: z.infer<typeof envSchema>, problems: string[]): ApiPixSettings | undefined {
  const set = (name: string) => e[name as keyof typeof e] !== undefined;
  const any = [...API_PIX_REQUIRED, ...API_PIX_OPTIONAL, 'API_PIX_CLIENT_SECRET_FILE'].some(set);
  if (!any) return undefined;
  if (e.API_PIX_CLIENT_SECRET && e.API_PIX_CLIENT_SECRET_FILE) {
    problems.push('API_PIX_CLIENT_SECRET / API_PIX_CLIENT_SECRET_FILE: set one of them, not both');
    return undefined;
  }
  let clientSecret = e.API_PIX_CLIENT_SECRET;
  if (e.API_PIX_CLIENT_SECRET_FILE) {
    try {
      clientSecret = readFileSync(e.API_PIX_CLIENT_SECRET_FILE, 'utf8').trim() || undefined;
    } catch (err) {
      problems.push(
        `API_PIX_CLIENT_SECRET_FILE=${JSON.stringify(e.API_PIX_CLIENT_SECRET_FILE)}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
      return undefined;
    }
  }
  const missing = API_PIX_REQUIRED.filter((name) =>
    name === 'API_PIX_CLIENT_SECRET' ? !clientSecret : !set(name),
  );
  if (missing.length) {
    problems.push(
      `API_PIX_*: the API Pix connector needs all of its settings, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (docs/configuration.md)`,
    );
    return undefined;
  }
  return {
    baseUrl: e.API_PIX_BASE_URL as string,
    ...(e.API_PIX_TOKEN_URL ? { tokenUrl: e.API_PIX_TOKEN_URL } : {}),
    clientId: e.API_PIX_CLIENT_ID as string,
    clientSecret: clientSecret as string,
    certFile: e.API_PIX_CERT_FILE as string,
    keyFile: e.API_PIX_KEY_FILE as string,
    ...(e.API_PIX_CA_FILE ? { caFile: e.API_PIX_CA_FILE } : {}),
    pixKey: e.API_PIX_PIX_KEY as string,
    ...(e.API_PIX_EXPIRY_SECONDS ? { expirySeconds: e.API_PIX_EXPIRY_SECONDS } : {}),
  };
}

const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/**
 * For process entry points: print one line per problem and exit 1, no stack trace. In
 * development, says which secrets run on their public defaults; in production, that no one is
 * screened when the operator screens elsewhere.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}): Config {
  try {
    const config = loadConfig(env, opts);
    const defaulted = (opts.secrets ?? SECRET_VARIABLES).filter(
      (name) => !env[name] && envSchema.shape[name].safeParse(undefined).data !== undefined,
    );
    // Said at every start, so no one mistakes a deployment that screens no one for one that does.
    if (config.NODE_ENV === 'production' && screensPeople(opts) && !config.ELIGIBILITY_URL)
      process.stderr.write(
        'pixflow: ELIGIBILITY_URL unset and ELIGIBILITY_SCREENED_ELSEWHERE=true: pixflow screens no one against the registry of impeded people; the operator says it does so elsewhere\n',
      );
    if (config.NODE_ENV === 'development' && defaulted.length)
      process.stderr.write(
        `pixflow: ${defaulted.join(', ')} on the public development default (NODE_ENV=production refuses it)\n`,
      );
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`pixflow: invalid configuration\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
      process.exit(1);
    }
    throw err;
  }
}
