import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { toApiPixTxid } from '../../connectors/api-pix';
import { freeStackPorts, newDataDir } from '../../scripts/embedded-stack';
import { waitUntil } from '../helpers/wait';

// The docs' tour and the README's first deposit, block by block, exactly as written: one bash (real curl) against the API,
// worker and sandbox started as `npm start` starts them (scripts/start.ts, every part a process,
// the sandbox's notifications registered with the API, the API Pix PSP's emulation over mutual
// TLS with its webhooks to the API's listener, its embedded Postgres with the back office's
// operators it prints), here on the run's Temporal. Where the tour says to repeat a GET until a
// status, the test repeats it too; where it says to set the printed passwords, the test sets them
// from what npm start printed.

const ROOT = path.resolve(__dirname, '../..');

/** The ```sh blocks of a Markdown text, in order. */
const shBlocks = (text: string): string[] =>
  [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

/** The README's "A first deposit" section. */
function firstDepositSection(readme: string): string {
  const section = /^## A first deposit\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## A first deposit" section');
  return section;
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of answers checked field by field
  body: any;
  text: string;
}

/**
 * What each step must answer: its request (a part of the block), status and the field that
 * matters; `silent`: a block that only sets things up and prints nothing.
 */
interface Step {
  request: string;
  status: number | 'silent';
  check?: (a: Answer) => void;
  /** The tour says to repeat this block until it answers so. */
  repeat?: true;
}

const state = (status: string | string[]) => (a: Answer) =>
  expect([status].flat(), a.text).toContain(a.body.state.status);

/**
 * What the tour's API Pix steps learn on the way: the deposits' txids (from the answers that
 * made them), so later checks name the same deposit; the PSP's address, once the stack is up.
 */
const seen = { apiPix: '', heldTxid: '', reversedTxid: '' };

/** A QR whose charge the API Pix PSP made: its BR Code names the PSP's location. */
const apiPixQr = (amountCentavos: number, keep: (txid: string) => void) => (a: Answer) => {
  expect(a.body).toMatchObject({ amountCentavos, image: '(PNG)' });
  expect(a.body.payload).toMatch(/^000201/);
  expect(a.body.payload).toContain(`${new URL(seen.apiPix).host}/qr/v2/`);
  keep(a.body.txid);
};

/** docs/tour.md's steps, after its first block (the addresses and the key). */
const steps: Step[] = [
  { request: '"$API/v1/onboardings" ', status: 201, check: state(['kyc', 'awaiting_liveness']) },
  {
    request: '/v1/onboardings/63401825771/liveness-link',
    status: 200,
    check: (a) => expect(a.body.url).toMatch(/^https?:\/\//),
  },
  {
    request: '$SANDBOX/sandbox/liveness/complete',
    status: 200,
    check: (a) => expect(a.body.statusVerification).toBe('manual_approve_pending'),
  },
  {
    request: '"$API/v1/onboardings/63401825771" ',
    status: 200,
    check: state('awaiting_review'),
    repeat: true,
  },
  { request: '/v1/onboardings/63401825771/review', status: 202 },
  { request: '"$API/v1/onboardings/63401825771" ', status: 200, check: state('approved'), repeat: true },
  {
    request: '$SANDBOX/sandbox/liveness/review',
    status: 200,
    check: (a) => expect(a.body.statusVerification).toBe('manual_approved'),
  },
  {
    request: '"$API/v1/deposits" ',
    status: 201,
    check: (a) => {
      expect(a.body.amountCentavos).toBe(15_000);
      expect(a.body.payload).toMatch(/^000201/); // a BR Code
      expect(a.body.image).toBe('(PNG)');
    },
  },
  {
    request: '$SANDBOX/sandbox/deposits/$TXID/pay',
    status: 200,
    check: (a) => expect(a.body.status).toBe('completed'),
  },
  { request: '"$API/v1/deposits/$TXID" ', status: 200, check: state('completed'), repeat: true },
  {
    request: '"$API/v1/withdrawals" ',
    status: 202,
    check: state(['validating', 'sending', 'processing']),
  },
  { request: '"$API/v1/withdrawals/$WID" ', status: 200, check: state('processing'), repeat: true },
  {
    request: '$SANDBOX/sandbox/withdrawals/$WID/settle',
    status: 200,
    check: (a) => expect(a.body.status).toBe('completed'),
  },
  { request: '"$API/v1/withdrawals/$WID" ', status: 200, check: state('completed'), repeat: true },
  { request: '/v1/withdrawals/$WID/receipt.png', status: 200, repeat: true },
  {
    request: '"pixKey": "52998224725"',
    status: 409,
    check: (a) =>
      expect(a.body).toMatchObject({
        type: 'https://pixflow.dev/problems/withdrawal-refused',
        reason: 'payee_not_owner',
        policyVersion: 1,
        state: { status: 'refused', reason: 'payee_not_owner' },
      }),
  },
  {
    request: '/v1/events?flow=deposit-$TXID',
    status: 200,
    check: (a) =>
      expect(a.body.items.map((e: { type: string }) => e.type)).toEqual([
        'deposit.awaiting_payment',
        'deposit.completed',
      ]),
  },
  // The step-up: possible only because the provider's own review was settled above.
  {
    request: '"amountCentavos": 600000',
    status: 202,
    check: (a) =>
      expect(a.body.state).toMatchObject({
        status: 'awaiting_biometrics',
        stepUp: { cause: 'amount_above_step_up', url: expect.stringMatching(/^https?:\/\//) },
      }),
  },
  {
    request: '$SANDBOX/sandbox/liveness/complete',
    status: 200,
    check: (a) => {
      expect(a.body.actionType).toBe('biometric_identification');
      expect(a.body.statusVerification).toBe('completed');
    },
  },
  {
    request: '"$API/v1/withdrawals/$WID" ',
    status: 200,
    check: (a) => expect(a.body.state).toMatchObject({ status: 'processing', stepUp: { outcome: 'passed' } }),
    repeat: true,
  },
  {
    request: '$SANDBOX/sandbox/withdrawals/$WID/settle',
    status: 200,
    check: (a) => expect(a.body.status).toBe('completed'),
  },
  // Four eyes: a large payout, approved in the back office by two operators npm start made.
  { request: 'approve() {', status: 'silent' },
  {
    request: '"amountCentavos": 1200000',
    status: 202,
    check: (a) => expect(a.body.state).toMatchObject({ status: 'awaiting_biometrics' }),
  },
  {
    request: '$SANDBOX/sandbox/liveness/complete',
    status: 200,
    check: (a) => expect(a.body.statusVerification).toBe('completed'),
  },
  {
    request: '"$API/v1/withdrawals/$WID" ',
    status: 200,
    check: (a) =>
      expect(a.body.state).toMatchObject({
        status: 'awaiting_approval',
        approval: { required: 2, approvals: [] },
      }),
    repeat: true,
  },
  { request: 'approve approver@pixflow.local "$APPROVER_PASSWORD"', status: 303 },
  // The same operator twice is one pair of eyes.
  { request: 'approve approver@pixflow.local "$APPROVER_PASSWORD"', status: 409 },
  { request: 'approve admin@pixflow.local "$ADMIN_PASSWORD"', status: 303 },
  {
    request: '"$API/v1/withdrawals/$WID" ',
    status: 200,
    check: (a) => {
      expect(a.body.state).toMatchObject({ status: 'processing', amountCentavos: 1_200_000 });
      expect(a.body.state.approval.approvals.map((x: { operator: string }) => x.operator)).toEqual([
        'approver@pixflow.local',
        'admin@pixflow.local',
      ]);
    },
    repeat: true,
  },
  {
    request: '$SANDBOX/sandbox/withdrawals/$WID/settle',
    status: 200,
    check: (a) => expect(a.body.status).toBe('completed'),
  },
  // A person the sandbox's registry of impeded people names: rejected at onboarding.
  { request: '"cpf": "45717804512"', status: 201, check: state(['kyc', 'rejected']) },
  {
    request: '"$API/v1/onboardings/45717804512" ',
    status: 200,
    check: (a) =>
      expect(a.body.state).toMatchObject({ status: 'rejected', reasons: ['impeded_self_excluded'] }),
    repeat: true,
  },
  {
    request: '"$API/v1/customers/45717804512" ',
    status: 200,
    check: (a) =>
      expect(a.body).toMatchObject({
        eligibility: 'impeded',
        impeded: { reason: 'self_excluded', source: 'registry:onboarding', registryAnswer: 'impeded' },
        closedAt: null,
      }),
  },
  // Two providers: the first one's deposit creation down, a deposit's charge made by the API Pix PSP.
  {
    request: '"errorRate": {"deposit": 1}',
    status: 200,
    check: (a) => expect(a.body.errorRate).toEqual({ deposit: 1 }),
  },
  {
    request: '"amountCentavos": 8000',
    status: 201,
    check: apiPixQr(8_000, (txid) => {
      seen.heldTxid = txid;
    }),
  },
  {
    request: '"$API/v1/deposits/$TXID" ',
    status: 200,
    check: (a) =>
      expect(a.body.state).toMatchObject({
        txid: seen.heldTxid,
        status: 'awaiting_payment',
        connector: 'api-pix',
      }),
  },
  // The first provider back: its knobs cleared, what it holds kept.
  {
    request: '-X DELETE "$SANDBOX/sandbox/faults"',
    status: 200,
    check: (a) => expect(a.body).toMatchObject({ errorRate: {}, failNext: {}, actThenFail: {} }),
  },
  // The tour's own mapping of the txid must be the connector's.
  {
    request: '"payer": "third_party"',
    status: 200,
    check: (a) =>
      expect(a.body).toMatchObject({
        txid: toApiPixTxid(seen.heldTxid),
        valor: '80.00',
        pagador: { cpf: '52998224725', nome: 'Carla Dias' },
      }),
  },
  {
    request: '"$API/v1/deposits/$TXID" ',
    status: 200,
    check: (a) =>
      expect(a.body.state).toMatchObject({
        txid: seen.heldTxid,
        status: 'held',
        reason: 'third_party_payer',
        connector: 'api-pix',
        payment: { payerIsClient: false, payerCpfMasked: '***.982.247-**' },
      }),
    repeat: true,
  },
  {
    request: '/v1/deposits/$TXID/resolution',
    status: 200,
    check: (a) =>
      expect(a.body).toMatchObject({ txid: seen.heldTxid, decision: 'return', status: 'return_requested' }),
  },
  {
    request: '"$API/v1/deposits/$TXID" ',
    status: 200,
    check: (a) =>
      expect(a.body.state).toMatchObject({
        txid: seen.heldTxid,
        status: 'returned',
        return: {
          returnId: `${seen.heldTxid}D1`,
          amountCentavos: 8_000,
          state: 'returned',
          by: 'ops@example.com',
          rtrId: expect.any(String),
        },
      }),
    repeat: true,
  },
  // A reversal: another deposit at the API Pix PSP, paid by the person, then taken back by MED.
  {
    request: '"amountCentavos": 5000',
    status: 201,
    check: apiPixQr(5_000, (txid) => {
      seen.reversedTxid = txid;
    }),
  },
  {
    request: '"payer": "holder"',
    status: 200,
    check: (a) =>
      expect(a.body).toMatchObject({
        txid: toApiPixTxid(seen.reversedTxid),
        valor: '50.00',
        pagador: { cpf: '63401825771' },
      }),
  },
  {
    request: '"$API/v1/deposits/$TXID" ',
    status: 200,
    check: (a) =>
      expect(a.body.state).toMatchObject({
        txid: seen.reversedTxid,
        status: 'completed',
        connector: 'api-pix',
        payment: { payerIsClient: true, e2eId: expect.any(String) },
      }),
    repeat: true,
  },
  {
    request: '/sandbox/pix/$E2E/med',
    status: 200,
    check: (a) =>
      expect(a.body).toMatchObject({ natureza: 'MED_FRAUDE', valor: '50.00', status: 'EM_PROCESSAMENTO' }),
  },
  {
    request: 'type=deposit.reversed',
    status: 200,
    check: (a) => {
      expect(a.body.items, a.text).toHaveLength(1);
      expect(a.body.items[0]).toMatchObject({
        type: 'deposit.reversed',
        data: {
          flowId: `deposit-${seen.reversedTxid}`,
          state: {
            status: 'completed',
            details: { reversal: { nature: 'med_fraud', amountCentavos: 5_000, partial: false } },
          },
        },
      });
      // Found by the sweep before it settled, it is recorded as it was then.
      expect(['processing', 'returned']).toContain(a.body.items[0].data.state.details.reversal.state);
    },
    repeat: true,
  },
  {
    request: '/backoffice/alerts.csv?rule=reversals',
    status: 200,
    check: (a) => {
      const [header, ...rows] = a.text.split('\n');
      expect(header).toMatch(/^id,raised_at,rule,status,cpf_masked,cpf_hash,triggered_by,/);
      const flow = `deposit-${seen.reversedTxid}`;
      const row = rows.find((r) => r.includes(`,${flow},${flow},`));
      expect(row, a.text).toBeDefined();
      expect(row).toContain(',reversals,open,***.018.257-**,');
      expect(row).toContain('""nature"":""med_fraud""');
      expect(row).toContain('""partial"":""whole""');
    },
    repeat: true,
  },
];

/** The README's first deposit, after the same first block. */
const firstDepositSteps: Step[] = [
  { request: '"$API/v1/onboardings" ', status: 201, check: state(['kyc', 'awaiting_liveness']) },
  {
    request: '/v1/onboardings/73628883504/liveness-link',
    status: 200,
    check: (a) => {
      expect(a.body.url).toMatch(/^https?:\/\//);
      expect(a.body.qrcode).toBe('(PNG)');
    },
  },
  {
    request: '$SANDBOX/sandbox/liveness/complete',
    status: 200,
    check: (a) => expect(a.body.statusVerification).toBe('completed'),
  },
  { request: '"$API/v1/onboardings/73628883504" ', status: 200, check: state('approved'), repeat: true },
  {
    request: '"$API/v1/deposits" ',
    status: 201,
    check: (a) => {
      expect(a.body.payload).toMatch(/^000201/);
      // The image is shown as a word, not as kilobytes of base64.
      expect(a.body.image).toBe('(PNG)');
    },
  },
  {
    request: '$SANDBOX/sandbox/deposits/$TXID/pay',
    status: 200,
    check: (a) => expect(a.body.status).toBe('completed'),
  },
  { request: '"$API/v1/deposits/$TXID" ', status: 200, check: state('completed'), repeat: true },
];

/** One bash for the whole tour, as a newcomer's terminal: variables carry from block to block. */
class Shell {
  private out = '';
  private err = '';
  private readonly child: ChildProcessWithoutNullStreams;
  private runs = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env });
    this.child.stdout.on('data', (b: Buffer) => {
      this.out += b.toString('utf8');
    });
    this.child.stderr.on('data', (b: Buffer) => {
      this.err += b.toString('utf8');
    });
  }

  /** Runs the block as written; its output, exit code and what it wrote to stderr. */
  async run(block: string): Promise<{ output: string; code: number; stderr: string }> {
    const marker = `__tour_block_${++this.runs}_done__`;
    this.out = '';
    this.err = '';
    this.child.stdin.write(`${block}\nprintf '\\n${marker} %s\\n' "$?"\n`);
    const done = new RegExp(`\\n${marker} (\\d+)\\n$`);
    const m = await waitUntil(
      () => done.exec(this.out),
      (x) => x !== null,
      {
        timeoutMs: 30_000,
        intervalMs: 20,
        onTimeout: () => new Error(`the block did not finish:\n${block}\n${this.out}${this.err}`),
      },
    );
    return { output: this.out.slice(0, m!.index), code: Number(m![1]), stderr: this.err };
  }

  close() {
    this.child.stdin.end();
    this.child.kill();
  }
}

/** `<body>\nHTTP <status>` as the tour's curls print it. */
function answerOf(output: string): Answer {
  const m = /(?:^|\n)HTTP (\d{3})\n?$/.exec(output);
  if (!m) throw new Error(`no "HTTP <status>" line in: ${output.slice(-500)}`);
  const text = output.slice(0, m.index);
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: Number(m[1]), body, text };
}

/** The password npm start's banner printed beside an operator's address. */
function printedPassword(output: string, email: string): string {
  const m = new RegExp(`^ +\\w+ +${email.replaceAll('.', '\\.')} / (\\S+)`, 'm').exec(output);
  if (!m) throw new Error(`npm start printed no password for ${email}:\n${output.slice(-3000)}`);
  return m[1]!;
}

/** A run of base64 this long is an image or a blob dumped on the reader, not an answer to read. */
const LONG_BASE64 = /[A-Za-z0-9+/]{200,}/;

let stack: { child: ReturnType<typeof spawn>; api: string; sandbox: string; output: () => string };
let dataDir: string;
let workDir: string;
let shell: Shell;

beforeAll(async () => {
  const ports = await freeStackPorts();
  dataDir = newDataDir('tour');
  workDir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-tour-cwd-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DATA_DIR: dataDir,
    // The run's Temporal instead of an embedded one; a task queue and CPF hash key of its own, so
    // the tour's fixed CPF is a new onboarding whatever else the run started. Postgres is npm
    // start's own, as it makes the operators it prints only there.
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `tour-${randomBytes(4).toString('hex')}`,
    PII_HASH_KEY: `tour-${randomBytes(16).toString('hex')}`,
    LOG_LEVEL: 'warn',
  };
  // `npm start`'s own key (dev-api-key), Postgres, sandbox and API Pix PSP.
  const own = [
    'API_KEYS',
    'DATABASE_URL',
    'PROVIDER_BASE_URL',
    'PROVIDER_AUTH_URL',
    'PROVIDER_LIVENESS_URL',
    'API_PIX_BASE_URL',
  ];
  for (const k of own) delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/start.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  child.stderr.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  const up = await waitUntil(
    () => (out.includes('Ctrl-C stops everything') ? 'up' : child.exitCode !== null ? 'exited' : 'starting'),
    (s) => s !== 'starting',
    { timeoutMs: 150_000, intervalMs: 250 },
  ).catch(() => 'timed out');
  stack = {
    child,
    api: `http://127.0.0.1:${ports.API_PORT}`,
    sandbox: `http://127.0.0.1:${ports.SANDBOX_PORT}`,
    output: () => out,
  };
  seen.apiPix = `https://127.0.0.1:${ports.SANDBOX_API_PIX_PORT}`;
  if (up !== 'up') throw new Error(`the stack did not come up (${up}):\n${out.slice(-4000)}`);
  // Only the addresses and the data folder differ from `npm start`'s; KEY keeps the tour's
  // default. The approvers' passwords are set as the tour tells a reader to: from what npm start
  // printed.
  const shellEnv: NodeJS.ProcessEnv = {
    ...process.env,
    API: stack.api,
    SANDBOX: stack.sandbox,
    APIPIX: seen.apiPix,
    DATA: dataDir,
    APPROVER_PASSWORD: printedPassword(out, 'approver@pixflow.local'),
    ADMIN_PASSWORD: printedPassword(out, 'admin@pixflow.local'),
  };
  delete shellEnv.KEY;
  shell = new Shell(workDir, shellEnv);
}, 180_000);

afterAll(async () => {
  shell?.close();
  if (stack) {
    const { child } = stack;
    const exited =
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve(child.exitCode)
        : new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited, stack.output().slice(-3000)).toBe(0);
  }
  for (const dir of [workDir, dataDir]) if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/**
 * Runs the blocks in one shell: the first sets the addresses and the key, then one block per step.
 * `readable`: no block prints a long base64 run (an image is shown as `(PNG)`).
 */
async function runBlocks(where: string, blocks: string[], stepsOf: Step[], opts: { readable?: true } = {}) {
  expect(blocks.length, where).toBe(stepsOf.length + 1);
  const setup = await shell.run(blocks[0]!);
  expect(setup, `${where}: the setup block`).toEqual({ output: '', code: 0, stderr: '' });

  for (const [i, step] of stepsOf.entries()) {
    const block = blocks[i + 1]!;
    const what = `${where} block ${i + 2}:\n${block}`;
    expect(block, what).toContain(step.request);
    const attempt = async () => {
      const r = await shell.run(block);
      expect(r.code, `${what}\n${r.stderr}`).toBe(0);
      expect(r.stderr, what).toBe('');
      if (opts.readable)
        expect(LONG_BASE64.exec(r.output)?.[0], `${what}\nprints a long base64 run`).toBeUndefined();
      if (step.status === 'silent') {
        expect(r.output, what).toBe('');
        return undefined;
      }
      const a = answerOf(r.output);
      expect(a.status, `${what}\n${a.text}`).toBe(step.status);
      step.check?.(a);
      return a;
    };
    if (!step.repeat) await attempt();
    else
      await waitUntil(
        () =>
          attempt().then(
            () => undefined,
            (e: unknown) => e as Error,
          ),
        (failure) => failure === undefined,
        { timeoutMs: 30_000, intervalMs: 300, onTimeout: (failure) => failure! },
      );
  }
}

it("the README's first deposit runs as written: a person onboarded, a deposit paid and completed", async () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  await runBlocks('README first deposit', shBlocks(firstDepositSection(readme)), firstDepositSteps, {
    readable: true,
  });
}, 120_000);

it('the tour runs as written: every flow from its first request to its outcome', async () => {
  const tour = readFileSync(path.join(ROOT, 'docs/tour.md'), 'utf8');
  await runBlocks('docs/tour.md', shBlocks(tour), steps, { readable: true });

  // The last step saved the receipt in the working folder: a readable comprovante, not a QR.
  const receipt = PNG.sync.read(readFileSync(path.join(workDir, 'receipt.png')));
  expect(receipt.width).toBe(520);
  expect(receipt.height).toBeGreaterThan(receipt.width);
}, 300_000);
