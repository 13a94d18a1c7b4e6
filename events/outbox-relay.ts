import type { CodecKeys } from '../common/codec';
import { type Config, EVENTS_DEFAULTS } from '../common/config';
import type { Logger } from '../common/logger';
import { openSecret } from '../common/secret-box';
import type { UrlPolicy } from '../common/url-safety';
import { type EventsListener, listenForEvents, pruneEvents, sequenceEvents } from '../db/events';
import type { Pool } from '../db/pool';
import {
  type ClaimedDelivery,
  claimDeliveries,
  type DeliveredAttempt,
  finishAttempt,
  finishDelivered,
} from '../db/webhook-deliveries';
import { sendWebhook } from './send-webhook';

// The outbox relay, run by every API process over the same tables: it positions committed events
// for the pull API, claims due deliveries (FOR UPDATE SKIP LOCKED, leased while an attempt runs,
// at most `perEndpoint` in flight per endpoint), sends them and records each attempt. A process
// killed mid-attempt leaves the lease to lapse: the delivery is sent again, with the same
// webhook-id. Postgres down: the passes fail and are tried again; nothing is lost, since nothing
// leaves the tables before its attempt is recorded.
// A committed event wakes it (LISTEN), at most one pass per interval; with nothing new it looks
// every `idleMs`, for retries come due and lapsed leases, and every interval while its listening
// connection is down. Delivered attempts that end together are recorded together (one statement
// for all of them, not a transaction each): at the peak each event would otherwise cost Postgres
// and this process a transaction of its own, and hold its stream, which the flow's next event
// waits for, across round trips; an endpoint's slot is free once its answer is in.

export interface EventsRelaySettings {
  intervalMs: number;
  /** Between passes no event woke, while listening: retries come due after seconds at the least. */
  idleMs: number;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  perEndpoint: number;
  retentionMs: number;
  policy: UrlPolicy;
}

export interface EventsRelayDeps {
  pool: Pool;
  log: Logger;
  codecKeys: CodecKeys;
  settings: EventsRelaySettings;
}

export interface EventsRelay {
  /** One pass: positions events, starts the due attempts; answers how many it started. */
  runOnce(): Promise<number>;
  /** Whether a committed event wakes it now (else it polls every interval). */
  listening(): boolean;
  /** Stops claiming, and waits for the attempts in flight. */
  stop(): Promise<void>;
}

const BATCH = 50;
const PRUNE_EVERY_MS = 3600_000;
/** A timer may fire a few milliseconds early by the wall clock: a woken pass still positions. */
const TIMER_SLACK_MS = 10;

/** When to try a delivery again after its `attempt`-th attempt failed; undefined: give up. */
export function retryAt(attempt: number, scheduleMs: readonly number[], now = Date.now()): Date | undefined {
  const wait = scheduleMs[attempt - 1];
  if (wait === undefined) return undefined;
  // ±20%: a burst that failed together does not come back together.
  return new Date(now + Math.round(wait * (0.8 + Math.random() * 0.4)));
}

export function startEventsRelay(deps: EventsRelayDeps): EventsRelay {
  const { pool, log, settings } = deps;
  const secretOf = openedSecrets(deps.codecKeys);
  const slots = endpointSlots();
  const inFlight = new Set<Promise<void>>();
  let lastFailureLog = 0;
  let lastPrune = 0;
  let lastSequenced = 0;
  let kick = () => {};

  const recordDelivered = deliveredRecorder(pool);

  async function attempt(d: ClaimedDelivery, answered: () => void): Promise<void> {
    const at = new Date();
    const result = await sendWebhook(
      { url: d.url, id: d.eventId, body: JSON.stringify(d.body), secrets: d.secrets.map(secretOf) },
      { timeoutMs: settings.timeoutMs, policy: settings.policy },
    );
    // Its lease keeps it from being claimed again until its attempt is recorded.
    answered();
    if (result.outcome === 'delivered') return recordDelivered({ delivery: d, at, ...result });
    const { disabled } = await finishAttempt(pool, {
      delivery: d,
      at,
      ...result,
      retryAt: result.outcome === 'failed' ? retryAt(d.attempt, settings.retryScheduleMs) : undefined,
      disableAfterMs: settings.disableAfterMs,
    });
    if (disabled) log.warn({ endpoint: d.endpointId, outcome: result.outcome }, 'webhook endpoint disabled');
  }

  function start(d: ClaimedDelivery) {
    const free = slots.take(d.endpointId);
    const p = attempt(d, free)
      .catch((err) => {
        // Its lease lapses and it is tried again: at least once, never lost.
        log.warn({ err: String(err), delivery: d.id, event: d.eventId }, 'webhook attempt not recorded');
      })
      .finally(() => {
        free();
        inFlight.delete(p);
        kick();
      });
    inFlight.add(p);
  }

  async function runOnce(): Promise<number> {
    // Positions for the pull API once an interval: the passes an ended attempt calls in between
    // are for deliveries only.
    if (Date.now() - lastSequenced >= settings.intervalMs - TIMER_SLACK_MS) {
      lastSequenced = Date.now();
      await sequenceEvents(pool);
    }
    if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      const pruned = await pruneEvents(pool, settings.retentionMs);
      if (pruned > 0) log.info({ pruned }, 'events past their retention deleted');
    }
    const claimed = await claimDeliveries(pool, {
      batch: BATCH,
      leaseMs: settings.timeoutMs + 20_000,
      perEndpoint: settings.perEndpoint,
      busy: slots.busy,
    });
    for (const d of claimed) start(d);
    return claimed.length;
  }

  const warn = (what: string) => (err: unknown) => {
    if (Date.now() - lastFailureLog > 60_000) {
      lastFailureLog = Date.now();
      log.warn({ err: String(err) }, what);
    }
  };
  let listener: EventsListener | undefined;
  const passes = passesOf(runOnce, {
    intervalMs: settings.intervalMs,
    idleMs: () => (listener?.listening() ? settings.idleMs : settings.intervalMs),
    onError: warn('events relay pass failed; retrying'),
  });
  kick = passes.kick;
  listener = listenForEvents(pool, passes.wake, warn('events relay not listening; polling meanwhile'));

  return {
    runOnce,
    listening: () => listener?.listening() ?? false,
    async stop() {
      await listener?.close();
      await passes.stop();
      await Promise.all([...inFlight]);
    },
  };
}

/** Deliveries in flight per endpoint: `take` one, and call what it answers (once or more) to free it. */
function endpointSlots() {
  const busy = new Map<string, number>();
  const count = (endpoint: string, by: number) => {
    const n = (busy.get(endpoint) ?? 0) + by;
    if (n > 0) busy.set(endpoint, n);
    else busy.delete(endpoint);
  };
  return {
    busy: busy as ReadonlyMap<string, number>,
    take(endpoint: string): () => void {
      count(endpoint, 1);
      let freed = false;
      return () => {
        if (freed) return;
        freed = true;
        count(endpoint, -1);
      };
    },
  };
}

/** Opens sealed signing secrets, each once (a few endpoints' secrets, opened for every attempt). */
function openedSecrets(keys: CodecKeys): (sealed: string) => string {
  const opened = new Map<string, string>();
  return (sealed) => {
    let secret = opened.get(sealed);
    if (secret === undefined) {
      // Rotated secrets leave theirs behind: a bound, not an eviction policy.
      if (opened.size >= 1000) opened.clear();
      secret = openSecret(keys, sealed);
      opened.set(sealed, secret);
    }
    return secret;
  };
}

/**
 * Records delivered attempts in batches: those that end while a batch is being written wait for
 * the next, and each promise settles once its own attempt is recorded. An attempt the batch could
 * not take (its stream held by an appender), or a batch that failed, is recorded alone.
 */
export function deliveredRecorder(pool: Pool, most = 200): (a: DeliveredAttempt) => Promise<void> {
  let queue: { a: DeliveredAttempt; done: (err?: unknown) => void }[] = [];
  let writing = false;
  const alone = (a: DeliveredAttempt) =>
    finishAttempt(pool, { ...a, outcome: 'delivered', error: null, disableAfterMs: 0 });
  const settleAlone = async (items: typeof queue) => {
    await Promise.all(
      items.map(({ a, done }) =>
        alone(a).then(
          () => done(),
          (err) => done(err ?? new Error('not recorded')),
        ),
      ),
    );
  };
  async function write() {
    writing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, most);
      queue = queue.slice(most);
      try {
        const left = new Set(
          await finishDelivered(
            pool,
            batch.map((x) => x.a),
          ),
        );
        for (const x of batch) if (!left.has(x.a)) x.done();
        // They wait for their stream's appender: the next batches need not.
        void settleAlone(batch.filter((x) => left.has(x.a)));
      } catch {
        await settleAlone(batch);
      }
    }
    writing = false;
  }
  return (a) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ a, done: (err) => (err === undefined ? resolve() : reject(err)) });
      // The attempts answered in the same turn join this batch.
      if (!writing && queue.length === 1) setImmediate(() => void write());
    });
}

/**
 * Passes one at a time. A pass that filled its batch, or a kick meanwhile (an attempt ended: its
 * endpoint has room again, its stream's next event may be due), calls the next at once; a wake
 * (an event committed) calls it one interval after the last began; otherwise it comes after
 * `idleMs()`.
 */
function passesOf(
  pass: () => Promise<number>,
  o: { intervalMs: number; idleMs: () => number; onError: (err: unknown) => void },
) {
  let stopped = false;
  let passing = false;
  let kicked = false;
  let woken = false;
  let lastStart = 0;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Number.POSITIVE_INFINITY;
  let current: Promise<void> = Promise.resolve();
  /** The next pass at `when` (epoch ms), unless one is due sooner. */
  const passAt = (when: number) => {
    if (stopped || when >= dueAt) return;
    clearTimeout(timer);
    dueAt = when;
    timer = setTimeout(
      () => {
        dueAt = Number.POSITIVE_INFINITY;
        current = loop();
      },
      Math.max(0, when - Date.now()),
    );
  };
  const loop = async () => {
    if (stopped) return;
    passing = true;
    lastStart = Date.now();
    let claimed = 0;
    try {
      claimed = await pass();
    } catch (err) {
      o.onError(err);
    }
    passing = false;
    if (claimed >= BATCH || kicked) passAt(Date.now());
    else if (woken) passAt(lastStart + o.intervalMs);
    else passAt(Date.now() + o.idleMs());
    kicked = false;
    woken = false;
  };
  current = loop();
  return {
    kick() {
      if (passing) kicked = true;
      else passAt(Date.now());
    },
    wake() {
      if (passing) woken = true;
      else passAt(lastStart + o.intervalMs);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}

/** The relay's settings from the configuration (common/config.ts). */
export function eventsRelaySettings(config: Config): EventsRelaySettings {
  return {
    intervalMs: config.EVENTS_RELAY_INTERVAL_MS,
    idleMs: Math.max(EVENTS_DEFAULTS.relayIdleMs, config.EVENTS_RELAY_INTERVAL_MS),
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS ?? EVENTS_DEFAULTS.retryScheduleMs,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
    perEndpoint: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    retentionMs: config.EVENTS_RETENTION_MS,
    policy: urlPolicyOf(config),
  };
}

/** Where webhooks may go, from the configuration. */
export function urlPolicyOf(
  config: Pick<Config, 'WEBHOOK_ALLOW_LOOPBACK' | 'WEBHOOK_ALLOWED_CIDRS'>,
): UrlPolicy {
  return { allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK, allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS };
}
