import { readFileSync } from 'node:fs';
import { parseArgs, parseEnv } from 'node:util';
import { z } from 'zod';
import { envSchema } from '../common/config';
import {
  type AuthHeaderSetting,
  type ConformanceReport,
  findingText,
  type LivenessIdFieldSetting,
  OPEN_POINT_IDS,
  OPEN_POINTS,
  type ProviderTarget,
  type ReceiptFormatSetting,
  runConformance,
} from '../connectors/identity-payments';
import { cpfSchema } from '../contracts/flow-input';
import { testDocumentFor } from '../sandbox/test-documents';

// The first step of going live (docs/production.md): which side of every point the provider's
// document leaves open your provider takes, the settings pixflow will use with it, and whether
// anything would stop a flow. Read-only but for one R$ 0,01 deposit QR code, never paid.
//   npm run conformance -- --env-file provider.env [--kyc-document CPF] [--json]
// Exit 0: every flow can run; 1: something would stop one; 2: the command or the settings are wrong.

const USAGE = `usage: npm run conformance -- [--env-file PATH] [--kyc-document CPF] [--json]
  PROVIDER_BASE_URL, PROVIDER_AUTH_URL, PROVIDER_CLIENT_ID, PROVIDER_CLIENT_SECRET, PROVIDER_API_KEY,
  PROVIDER_MERCHANT and PROVIDER_TIMEOUT_MS come from the env file, else from the environment;
  PROVIDER_AUTH_HEADER and PROVIDER_RECEIPT_FORMAT (auto when unset) are checked against the provider.`;

const providerSettingsSchema = envSchema.pick({
  PROVIDER_BASE_URL: true,
  PROVIDER_AUTH_URL: true,
  PROVIDER_CLIENT_ID: true,
  PROVIDER_CLIENT_SECRET: true,
  PROVIDER_API_KEY: true,
  PROVIDER_MERCHANT: true,
  PROVIDER_TIMEOUT_MS: true,
  PROVIDER_AUTH_HEADER: true,
  PROVIDER_RECEIPT_FORMAT: true,
  PROVIDER_LIVENESS_ID_FIELD: true,
  SANDBOX_PORT: true,
});

const argsSchema = z.object({
  envFile: z.string().min(1).optional(),
  kycDocument: cpfSchema.default(testDocumentFor('regular').cpf),
  json: z.boolean().default(false),
});

class UsageError extends Error {}

function fail(problems: string[]): never {
  throw new UsageError(problems.join('\n'));
}

interface Settings {
  target: ProviderTarget;
  /** The two settings conformance tells, as pixflow would use them now (`auto` when unset). */
  given: {
    PROVIDER_AUTH_HEADER: AuthHeaderSetting;
    PROVIDER_RECEIPT_FORMAT: ReceiptFormatSetting;
    PROVIDER_LIVENESS_ID_FIELD: LivenessIdFieldSetting;
  };
}

/** The env file's values over the environment's: the file named is the provider tested. */
function settingsFrom(envFile: string | undefined): Settings {
  let fromFile: Record<string, string> = {};
  if (envFile) {
    try {
      fromFile = parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>;
    } catch (err) {
      fail([`--env-file ${envFile}: ${(err as Error).message}`]);
    }
  }
  // Empty means unset, as pixflow's own configuration reads it.
  const merged = Object.fromEntries(
    Object.entries({ ...process.env, ...fromFile }).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = providerSettingsSchema.safeParse(merged);
  if (!parsed.success) fail(parsed.error.issues.map((i) => `${String(i.path[0] ?? '?')}: ${i.message}`));
  const e = parsed.data;
  // Unset, as for pixflow itself: the sandbox `npm start` runs.
  const sandbox = `http://127.0.0.1:${e.SANDBOX_PORT}`;
  const baseUrl = e.PROVIDER_BASE_URL ?? sandbox;
  const target = {
    baseUrl,
    authUrl: e.PROVIDER_AUTH_URL ?? (e.PROVIDER_BASE_URL ? baseUrl : sandbox),
    clientId: e.PROVIDER_CLIENT_ID,
    clientSecret: e.PROVIDER_CLIENT_SECRET,
    apiKey: e.PROVIDER_API_KEY,
    merchant: e.PROVIDER_MERCHANT,
    timeoutMs: e.PROVIDER_TIMEOUT_MS,
  };
  const given = {
    PROVIDER_AUTH_HEADER: e.PROVIDER_AUTH_HEADER,
    PROVIDER_RECEIPT_FORMAT: e.PROVIDER_RECEIPT_FORMAT,
    PROVIDER_LIVENESS_ID_FIELD: e.PROVIDER_LIVENESS_ID_FIELD,
  };
  return { target, given };
}

function verdictOf(report: ConformanceReport): string {
  const failed = report.checks.filter((c) => !c.ok).map((c) => c.name);
  if (failed.length > 0) {
    return `verdict: NOT READY: ${failed.length === 1 ? 'this would stop a flow' : 'these would stop flows'}: ${failed.join('; ')}`;
  }
  const count = (side: string) => OPEN_POINT_IDS.filter((id) => report.points[id].side === side).length;
  const parts = ['doc', 'other', 'both accepted', 'neither', 'not probed']
    .map((side) => [side, count(side)] as const)
    .filter(([, n]) => n > 0)
    .map(([side, n]) => `${side} ${n}`);
  return `verdict: READY: pixflow handles every answer this provider gave (${parts.join(', ')})`;
}

function settingLines(report: ConformanceReport, given: Settings['given']): string[] {
  const line = (name: keyof Settings['given'], none: string) => {
    const told = report.settings[name];
    if (!told) return [`# ${name}: not told by this run (${none})`];
    return [
      `${name}=${told}`,
      ...(given[name] === told ? [] : [`# (pixflow uses now: ${name}=${given[name]})`]),
    ];
  };
  return [
    ...line('PROVIDER_AUTH_HEADER', 'no KYC or inquiry answer'),
    ...line('PROVIDER_RECEIPT_FORMAT', 'no readable receipt answer'),
    ...line('PROVIDER_LIVENESS_ID_FIELD', 'no liveness session started'),
  ];
}

function text(report: ConformanceReport, given: Settings['given'], verdict: string): string {
  const width = Math.max(...OPEN_POINT_IDS.map((id) => id.length)) + 2;
  const points = OPEN_POINT_IDS.map((id) => {
    const f = report.points[id];
    const seen =
      f.side === 'doc' || f.side === 'other' || f.side === 'both accepted' ? `  (${f.observed})` : '';
    return `  ${id.padEnd(width)}${findingText(f)}${seen}`;
  });
  const checks = report.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
  return [
    `pixflow conformance against ${report.baseUrl} (token from ${report.authUrl})`,
    '',
    'open points: the side this provider takes (doc: as the sandbox answers by default)',
    ...points,
    '',
    'checks',
    ...checks,
    '',
    'settings pixflow will use with this provider (paste into its environment)',
    ...settingLines(report, given),
    '',
    verdict,
  ].join('\n');
}

function json(report: ConformanceReport, given: Settings['given'], verdict: string): string {
  const points = Object.fromEntries(
    OPEN_POINT_IDS.map((id) => [id, { question: OPEN_POINTS[id].question, ...report.points[id] }]),
  );
  return JSON.stringify(
    { ...report, points, settingsNow: given, verdict: verdict.replace(/^verdict: /, '') },
    null,
    2,
  );
}

async function main(argv: string[]): Promise<number> {
  let raw: ReturnType<typeof parseArgs>['values'];
  try {
    ({ values: raw } = parseArgs({
      args: argv,
      options: {
        'env-file': { type: 'string' },
        'kyc-document': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    fail([(err as Error).message, USAGE]);
  }
  if (raw.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const args = argsSchema.safeParse({
    envFile: raw['env-file'],
    kycDocument: raw['kyc-document'],
    json: raw.json,
  });
  const flag = (key: PropertyKey | undefined) =>
    `--${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (!args.success) fail(args.error.issues.map((i) => `${flag(i.path[0])}: ${i.message}`));
  const { target, given } = settingsFrom(args.data.envFile);
  const report = await runConformance(target, { document: args.data.kycDocument, given });
  const verdict = verdictOf(report);
  process.stdout.write(`${args.data.json ? json(report, given, verdict) : text(report, given, verdict)}\n`);
  return report.ok ? 0 : 1;
}

// npm's script ends in `--`: Node itself reads a later `--env-file` whose file is missing as its own
// option and stops, before this code could name it.
const argv = process.argv.slice(2);
main(argv[0] === '--' ? argv.slice(1) : argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`conformance: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`conformance: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
