import { cpuTicks, stealPctSince } from './proc';
import { say, settings, sleep } from './settings';
import { completionRate, type RampPoint, round, saturated } from './stats';
import type { StepLoad } from './step-load';

// How the bench offers load: an open-loop step at a fixed rate, a ramp of such steps up to
// saturation, and a closed loop of a fixed number of callers.

/**
 * One flow offered: its id, whether it was accepted, and the answer's status when it was not
 * ("timeout" when the client gave up). `latencyMs`: the part of the launch that is the answer
 * measured (the floor's update, not the signals sent after it); the whole launch otherwise.
 */
export interface Launched {
  id: string;
  ok: boolean;
  status?: number | string;
  latencyMs?: number;
}

/** Completion times (ms) of those of `ids` that have completed so far. */
export type Completions = (ids: string[]) => Promise<number[]>;

export interface StepResult {
  point: RampPoint;
  ids: string[];
  /** The accepted offers' ids, with when each was answered (ms). */
  accepted: Map<string, number>;
  latenciesMs: number[];
  /** Offers made (a step stopped early makes fewer than it planned). */
  offered: number;
  errors: number;
  /** Failed offers by HTTP status ("network" when there was no answer, "timeout" when abandoned). */
  errorsBy: Record<string, number>;
  /** CPU time the hypervisor took while the step ran (a shared machine's noise, for the record). */
  stealPct: number;
  /** Whether `stopWhen` ended the offering early. */
  stoppedEarly: boolean;
  /** When the offering started and ended (ms). */
  t0: number;
  t1: number;
  /** The stack's load while the step offered, when `observe` was given. */
  load?: StepLoad;
}

export interface StepOptions {
  /** How long to wait for the step's flows to complete once offered (default 90 s). */
  drainMs?: number;
  /** Checked after each answer (latencies so far, failed offers so far): true ends the offering. */
  stopWhen?: (latenciesMs: readonly number[], failures: number) => boolean;
  /** Told of each accepted offer as it is answered. */
  onAccepted?: (id: string, at: number) => void;
  /** Reads the stack's load while the step offers (started with the offering, ended with it). */
  observe?: () => () => StepLoad;
}

/**
 * Offers `rate` flows per second for `durMs` (open loop: one start every 1/rate s whatever the
 * answers), then waits for them to finish; throughput is the rate at which they completed
 * (completionRate: below capacity the offered rate, above it the system's capacity).
 */
export async function step(
  rate: number,
  durMs: number,
  launch: () => Promise<Launched>,
  completions: Completions,
  opts: StepOptions = {},
): Promise<StepResult> {
  const ids: string[] = [];
  const accepted = new Map<string, number>();
  const latenciesMs: number[] = [];
  const errorsBy: Record<string, number> = {};
  let failures = 0;
  let stop = false;
  const check = () => {
    if (opts.stopWhen?.(latenciesMs, failures)) stop = true;
  };
  const failed = (why: string) => {
    errorsBy[why] = (errorsBy[why] ?? 0) + 1;
    failures += 1;
    check();
  };
  const answered = (r: Launched, started: number) => {
    ids.push(r.id);
    if (!r.ok) return failed(String(r.status ?? 'unknown'));
    const at = Date.now();
    latenciesMs.push(r.latencyMs ?? at - started);
    accepted.set(r.id, at);
    opts.onAccepted?.(r.id, at);
    check();
  };
  const pending: Promise<void>[] = [];
  const endObserving = opts.observe?.();
  const cpu0 = cpuTicks();
  const t0 = Date.now();
  const n = Math.max(1, Math.round((rate * durMs) / 1000));
  let offered = 0;
  for (let i = 0; i < n && !stop; i++) {
    const wait = t0 + (i * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
    if (stop) break;
    const started = Date.now();
    offered += 1;
    pending.push(
      launch().then(
        (r) => answered(r, started),
        () => failed('network'),
      ),
    );
  }
  const t1 = stop ? Date.now() : t0 + durMs;
  if (Date.now() < t1) await sleep(t1 - Date.now());
  const load = endObserving?.();
  await Promise.all(pending);
  const times = await drain(ids, completions, opts.drainMs ?? 90_000);
  return {
    point: { offered: round(rate), achieved: round(completionRate(times)) },
    ids,
    accepted,
    latenciesMs,
    offered,
    errors: failures,
    errorsBy,
    stealPct: stealPctSince(cpu0),
    stoppedEarly: stop,
    t0,
    t1,
    ...(load ? { load } : {}),
  };
}

/** Completion times of `ids`, once all have completed or `drainMs` has passed. */
async function drain(ids: string[], completions: Completions, drainMs: number): Promise<number[]> {
  const drainUntil = Date.now() + drainMs;
  let times = await completions(ids);
  while (times.length < ids.length && Date.now() < drainUntil) {
    await sleep(500);
    times = await completions(ids);
  }
  return times;
}

/** A step's one line in the log. */
export const stepLine = (name: string, r: StepResult) =>
  `${name}: offered ${r.point.offered}/s -> completed ${r.point.achieved}/s (errors ${r.errors}${r.errors ? ` ${JSON.stringify(r.errorsBy)}` : ''}, CPU steal ${r.stealPct}%)`;

/** A ramp's step: what it offered and achieved, and the stack's load meanwhile when it was read. */
export type ObservedPoint = RampPoint & { load?: StepLoad };

/**
 * Steps of `settings.stepMs` from `startRate`, ×1.5 each, until the ramp stops rising
 * (`saturated`) or after `settings.maxSteps`.
 */
export async function ramp(
  name: string,
  startRate: number,
  launch: () => Promise<Launched>,
  completions: Completions,
  observe?: StepOptions['observe'],
): Promise<ObservedPoint[]> {
  const points: ObservedPoint[] = [];
  let rate = startRate;
  for (let i = 0; i < settings.maxSteps; i++) {
    const r = await step(rate, settings.stepMs, launch, completions, { observe });
    points.push(r.load ? { ...r.point, load: r.load } : r.point);
    say(stepLine(name, r));
    if (saturated(points)) break;
    rate *= 1.5;
  }
  await sleep(3_000);
  return points;
}

export interface ClosedLoopResult {
  /** When the loop started (ms). */
  t0: number;
  seconds: number;
  /** Latency of each item that succeeded. */
  latenciesMs: number[];
  errors: number;
}

/** Sends every item once, `concurrency` callers each sending the next one as soon as its last is answered. */
export async function closedLoop<T>(
  items: readonly T[],
  concurrency: number,
  send: (item: T) => Promise<boolean>,
): Promise<ClosedLoopResult> {
  const latenciesMs: number[] = [];
  let i = 0;
  let errors = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i < items.length) {
        const item = items[i++] as T;
        const s = Date.now();
        if (await send(item).catch(() => false)) latenciesMs.push(Date.now() - s);
        else errors++;
      }
    }),
  );
  return { t0, seconds: (Date.now() - t0) / 1000, latenciesMs, errors };
}
