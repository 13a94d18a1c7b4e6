// Every value this repository gives a secret variable (API_KEYS, CODEC_TOKENS, PII_HASH_KEY,
// WEBHOOK_SECRET, BACKOFFICE_SESSION_SECRET, and the names tests and docs keep them under):
// config.ts's development defaults, docker-compose.yml's old default, the tests', the docs'.
// Anyone can read them, so production refuses them (common/production-secrets.ts).
// test/unit/public-secrets.test.ts scans the tracked files and fails on a value missing here.
// A value no longer in the files stays: the git history still shows it.

export const PUBLIC_SECRET_VALUES: ReadonlySet<string> = new Set([
  // config.ts's development defaults
  'dev-webhook-secret-change-me',
  'dev-pii-hash-key-change-me',
  'dev-backoffice-session-secret-change-me',
  'whsec_ZGV2LWVsaWdpYmlsaXR5LXNlY3JldC1jaGFuZ2UtbWU=',
  'whsec_ZGV2LXBheW91dC1hdXRob3JpemF0aW9uLWNoYW5nZS1tZQ==',
  // docker-compose.yml's default until it required its own
  'compose-webhook-secret-change-me',
  // `npm start`'s API key (the README's first deposit and the tour use it)
  'dev-api-key',
  // the provider sandbox's credentials, and the docs' example of an endpoint's signing secret
  'sandbox-secret',
  'sandbox-api-key',
  // the API Pix emulation's own account, when pixflow's settings name none
  'dev-api-pix-secret',
  'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  // .env.example's placeholders: a copy left unchanged must not start
  'replace-me-postgres-password',
  'whsec_cmVwbGFjZS1tZS1lbGlnaWJpbGl0eS1zZWNyZXQ=',
  'replace-me-api-key',
  'replace-me-webhook-secret',
  'replace-me-codec-token',
  'replace-me-pii-hash-key',
  'replace-me-backoffice-session-secret-0000',
  // the tests' and the bench's own
  'test-api-key-1',
  'another-key',
  'test-codec-token',
  'e2e-key',
  'e2e-webhook-secret-0123456789',
  'bench-key',
  'bench-webhook-secret-0123456789',
  'faults-api-key',
  'faults-webhook-secret-0123456789',
  'not-a-token',
  'short-secret',
  'return-test-webhook-secret',
  'faults-pii-hash-key-0123456789',
  'hostile-webhook-secret-0123456789',
  'production-test-key',
  'production-webhook-secret-0123456789',
  'trace-test-key',
  'test-key',
  'nexus-key',
  'policy-processes-key',
  'nexus-webhook-secret-0123456789',
  'test-pii-hash-key-0123456789',
  'test-webhook-secret-0123456789',
  'ingress-test-pii-key-0123',
  'brand-connectors-pii-key-0123456789',
  'brand-policy-worker-pii-key-0123456789',
  'brand-tour-bootstrap-key',
  'iso-routes-bootstrap-key',
  'some-secret',
  'k',
  'tok1',
  'tok2',
  // the tests' wrong ones
  'nope',
  'short',
  'wrong-key',
  'wrong-token',
  'must-not-be-stored',
  'wrong-secret-0123456789',
  'not-the-secret-0123456789',
  'not-the-secret-at-all',
]);

/** Codec key material (base64 of 32 bytes), whatever id a CODEC_KEYS entry gives it. */
export const PUBLIC_CODEC_KEY_MATERIAL: readonly string[] = [
  // config.ts's development key, id dev1
  'ZGV2LW9ubHkta2V5LWRvLW5vdC11c2UtaW4tcHJvZCE=',
  // .env.example's placeholder, id k1
  'cmVwbGFjZS1tZS1jb2RlYy1rZXktMzItYnl0ZXMhISE=',
  // the tests' key (test/helpers/temporal.ts: 32 bytes of 7)
  Buffer.alloc(32, 7).toString('base64'),
];

/**
 * Postgres passwords this repository shows (in a URL or as POSTGRES_PASSWORD): the embedded
 * Postgres's, .env.example's, the tests' and docs' examples. A DATABASE_URL with one is refused
 * in production like any public secret; every value above is refused as a password too.
 */
export const PUBLIC_POSTGRES_PASSWORDS: readonly string[] = [
  // db/embedded.ts: npm start's and the test run's Postgres
  'pixflow',
  // .env.example's placeholder
  'replace-me-postgres-password',
  // the tests' and docs' examples
  'nothing',
  's:cret',
  'p',
];
