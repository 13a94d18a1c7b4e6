import { randomBytes } from 'node:crypto';
import { generate as generateCpf } from '@fnando/cpf';
import { maskCpf } from '../../common/mask';
import { RULE_DEFAULTS } from '../../policy/seed';
import { testDocuments } from '../../sandbox/test-documents';

// People who may move money, made the way a real one is: onboarded through pixflow's API until
// the onboarding is `approved` and the person's verification says so, with the provider sandbox
// standing in for the person's phone (the liveness) and the API's operator review deciding the
// manual review. Money then moves within the rules' defaults: a payout goes to the person's own
// CPF key, at most the step-up bound at a time (above it the payout needs a biometric step-up)
// and at most the daily limit a day per person (People spreads a load over several).
// The tests, the fault suite and the bench share it.

/** A person's payouts per America/Sao_Paulo day (WITHDRAWAL_DAILY_LIMIT_CENTAVOS' default). */
export const DAILY_PAYOUT_LIMIT_CENTAVOS = RULE_DEFAULTS.withdrawalDailyLimitCentavos;
/** A payout above this needs the person's biometric step-up, which these people do not do. */
export const STEP_UP_ABOVE_CENTAVOS = RULE_DEFAULTS.biometricStepUpCentavos;

/** Where pixflow answers: its API with a key it accepts, and the provider sandbox. */
export interface PixflowAt {
  api: string;
  apiKey: string;
  sandbox: string;
}

/** The `client` of a deposit or a withdrawal. */
export interface Person {
  externalId: string;
  cpf: string;
  email: string;
  name: string;
}

const designated = new Set(testDocuments.map((d) => d.cpf));
const handedOut = new Set<string>();

/**
 * A valid CPF that is no sandbox test document (so KYC `regular`, liveness ending in manual
 * review) and that this process has not handed out before.
 */
export function newCpf(): string {
  for (;;) {
    const cpf = generateCpf();
    if (!designated.has(cpf) && !handedOut.has(cpf)) {
      handedOut.add(cpf);
      return cpf;
    }
  }
}

/** A person with this CPF (a new one by default), not onboarded yet. */
export function newPerson(cpf = newCpf(), details: Partial<Omit<Person, 'cpf'>> = {}): Person {
  return {
    externalId: `person-${randomBytes(4).toString('hex')}`,
    cpf,
    email: 'ana@example.com',
    name: 'Ana Souza',
    ...details,
  };
}

/** Where a payout to this person goes: their own CPF Pix key. */
export const ownCpfKey = (p: Pick<Person, 'cpf'>) => ({ pixKey: p.cpf, pixType: 'CPF' as const });

/**
 * The sandbox sends its liveness callbacks to this ingress URL (only those: where deposit and
 * payout notifications go stays as it was). Onboarding needs them; `npm start`, the end-to-end
 * stack, the fault suite and the bench register every point already.
 */
export async function sendLivenessCallbacksTo(sandbox: string, ingress: string, partnerId: string) {
  const res = await fetch(`${sandbox}/sandbox/notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: ingress, partnerId, points: ['liveness'] }),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`sandbox /sandbox/notifications: ${res.status} ${await res.text()}`);
}

export interface OnboardOptions {
  /** The onboarding's `plan` and `event` (default plan_basic, onboarding). */
  plan?: string;
  event?: string;
  /** Who approves the manual review, kept in the flow's state. */
  reviewer?: string;
  /**
   * Who decides the manual review: pixflow's operator (the API's review, the default), or the
   * provider's own reviewer (the sandbox's), after which the provider counts the person as
   * onboarded and gives them biometric identifications (a step-up needs one).
   */
  reviewedBy?: 'operator' | 'provider';
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  /**
   * Keys of other brands that meet the person once approved (their own POST /v1/onboardings,
   * answered at once): a brand moves only the money of people it met (docs/brands.md).
   */
  alsoMetBy?: readonly string[];
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
  body: any;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const POLL_MS = 250;

/**
 * One JSON request; a 429 or a 503 (Temporal or the worker slow to answer: the API asks for the
 * same request again) is waited out (its Retry-After) and sent again until the deadline.
 */
async function request(url: string, deadline: number, init: { key?: string; body?: unknown } = {}) {
  for (;;) {
    const res = await fetch(url, {
      method: init.body === undefined ? 'GET' : 'POST',
      headers: {
        ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && Date.now() < deadline) {
      await sleep(1_000 * Math.max(1, Number(res.headers.get('retry-after')) || 1));
      continue;
    }
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body } as Answer;
  }
}

/**
 * Onboards a person through the API until they may move money: POST /v1/onboardings, then the
 * person completes the liveness (the sandbox's control endpoint), the operator approves the
 * manual review (POST /v1/onboardings/:cpf/review; test document 73628883504 is approved without
 * one), the onboarding is `approved` and GET /v1/customers/:cpf shows the verification
 * `approved`, which is what the money rules read. A person already approved is answered at once;
 * a rejected or expired onboarding is an error.
 */
export async function onboard(
  at: PixflowAt,
  who: Person | string = newPerson(),
  opts: OnboardOptions = {},
): Promise<Person> {
  const person = typeof who === 'string' ? newPerson(who) : who;
  const { cpf } = person;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const api = (path: string, body?: unknown) =>
    request(`${at.api}${path}`, deadline, { key: at.apiKey, body });
  const fail = (what: string, a: Answer) =>
    new Error(`onboarding ${maskCpf(cpf)}: ${what} answered ${a.status} ${JSON.stringify(a.body)}`);

  const started = await api('/v1/onboardings', {
    cpf,
    plan: opts.plan ?? 'plan_basic',
    event: opts.event ?? 'onboarding',
  });
  if (started.status !== 201 && started.status !== 200) throw fail('POST /v1/onboardings', started);

  let completed = false;
  let reviewed = false;
  let last: Answer = started;
  for (;;) {
    if (Date.now() > deadline) throw fail('not approved in time; GET /v1/onboardings/:cpf', last);
    last = await api(`/v1/onboardings/${cpf}`);
    if (last.status !== 200) throw fail('GET /v1/onboardings/:cpf', last);
    const state = last.body.state as { status: string; link?: unknown };
    if (state.status === 'approved') break;
    if (state.status === 'rejected' || state.status === 'expired') throw fail('the onboarding ended', last);
    if (state.status === 'awaiting_liveness' && state.link && !completed) {
      // The person finishes the liveness on their phone; its callback reaches the flow.
      const done = await request(`${at.sandbox}/sandbox/liveness/complete`, deadline, {
        body: { document: cpf },
      });
      if (done.status !== 200) throw fail('POST /sandbox/liveness/complete', done);
      completed = true;
    } else if (state.status === 'awaiting_review' && !reviewed && opts.reviewedBy === 'provider') {
      const review = await request(`${at.sandbox}/sandbox/liveness/review`, deadline, {
        body: { document: cpf, decision: 'approve' },
      });
      if (review.status !== 200) throw fail('POST /sandbox/liveness/review', review);
      reviewed = true;
    } else if (state.status === 'awaiting_review' && !reviewed) {
      const review = await api(`/v1/onboardings/${cpf}/review`, {
        decision: 'approve',
        by: opts.reviewer ?? 'ops@example.com',
        reason: 'documents checked',
      });
      if (review.status !== 202) throw fail('POST /v1/onboardings/:cpf/review', review);
      reviewed = true;
    }
    await sleep(POLL_MS);
  }

  // The flow's state says approved as it records it: the person's verification follows.
  for (;;) {
    last = await api(`/v1/customers/${cpf}`);
    if (last.status === 200 && last.body.verification?.status === 'approved') break;
    if (Date.now() > deadline) throw fail('the verification is not approved; GET /v1/customers/:cpf', last);
    await sleep(POLL_MS);
  }
  for (const key of opts.alsoMetBy ?? []) {
    const met = await request(`${at.api}/v1/onboardings`, deadline, {
      key,
      body: { cpf, plan: opts.plan ?? 'plan_basic', event: opts.event ?? 'onboarding' },
    });
    if (met.status !== 200) throw fail("another brand's POST /v1/onboardings", met);
  }
  return person;
}

/**
 * People, each onboarded once, to spread a load over: deposits take turns, payouts go to whoever
 * has room left under the daily limit (counted from when this pool was made, as if all in one
 * day), each to that person's own CPF key.
 */
export class People {
  private turn = 0;
  private readonly paidOut = new Map<string, number>();

  constructor(
    readonly all: readonly Person[],
    private readonly dailyLimitCentavos = DAILY_PAYOUT_LIMIT_CENTAVOS,
  ) {
    if (all.length === 0) throw new Error('People needs at least one person');
  }

  /** The next person in turn. */
  next(): Person {
    const p = this.all[this.turn % this.all.length] as Person;
    this.turn += 1;
    return p;
  }

  /**
   * The next person in turn with room for this payout today, which is counted against them.
   * Throws above the step-up bound or when nobody has room: a load that needs more people.
   */
  payee(amountCentavos: number): Person {
    if (amountCentavos > STEP_UP_ABOVE_CENTAVOS) {
      throw new Error(`a payout of ${amountCentavos} centavos needs a biometric step-up`);
    }
    for (let i = 0; i < this.all.length; i++) {
      const p = this.next();
      const paid = this.paidOut.get(p.cpf) ?? 0;
      if (paid + amountCentavos <= this.dailyLimitCentavos) {
        this.paidOut.set(p.cpf, paid + amountCentavos);
        return p;
      }
    }
    throw new Error(
      `no one of the ${this.all.length} people has ${amountCentavos} centavos of payouts left today`,
    );
  }
}

/** How many people a load of payouts adding up to at most this needs, under the daily limit. */
export const peopleForPayouts = (totalCentavos: number) =>
  Math.max(1, Math.ceil(totalCentavos / DAILY_PAYOUT_LIMIT_CENTAVOS));

/** `count` new people, onboarded `concurrency` at a time. */
export async function onboardPeople(
  at: PixflowAt,
  count: number,
  opts: OnboardOptions & { concurrency?: number } = {},
): Promise<People> {
  const people = Array.from({ length: count }, () => newPerson());
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(opts.concurrency ?? 4, count) }, async () => {
      while (next < people.length) await onboard(at, people[next++] as Person, opts);
    }),
  );
  return new People(people);
}
