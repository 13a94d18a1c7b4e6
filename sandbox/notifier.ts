import type { NotificationLogEntry, NotificationPoint, SandboxState } from './state';
import type { Timers } from './timers';

// Posts notification messages (deposit/withdraw) and liveness callbacks as JSON to the registered URL
// of their point, with the registered partner_id. Retries with exponential back-off while the receiver
// fails (non-2xx or connection error), at most `maxAttempts` times. Fault knobs can drop, duplicate,
// delay and reorder messages.

export interface NotifierOptions {
  state: SandboxState;
  timers: Timers;
  maxAttempts: number;
  backoffMs: number;
  timeoutMs: number;
}

const LOG_LIMIT = 1000;

export class Notifier {
  private seq = 0;
  private held: NotificationLogEntry[] = [];
  private holdTimerArmed = false;

  constructor(private readonly options: NotifierOptions) {}

  private get state(): SandboxState {
    return this.options.state;
  }

  /** The callback addresses for a point (used for liveness url_callback.sent). */
  targetFor(point: NotificationPoint) {
    return this.state.targets[point];
  }

  /** `drop`: this message is lost on the way (never delivered), as `dropNext` loses the next ones. */
  send(point: NotificationPoint, body: Record<string, unknown>, opts: { drop?: boolean } = {}): void {
    const target = this.state.targets[point];
    if (!target) return;
    const nf = this.state.faults.notifications;
    const entry: NotificationLogEntry = {
      seq: ++this.seq,
      point,
      url: target.url,
      message: { ...body, partner_id: target.partnerId },
      status: 'pending',
      attempts: 0,
    };
    this.state.notifications.push(entry);
    if (this.state.notifications.length > LOG_LIMIT) this.state.notifications.shift();

    if (opts.drop || nf.dropNext > 0) {
      if (!opts.drop) nf.dropNext -= 1;
      entry.status = 'dropped';
      this.state.counters.notificationsDropped += 1;
      return;
    }
    if (nf.reorderWindow > 1) {
      this.held.push(entry);
      if (this.held.length >= nf.reorderWindow) this.flush();
      else if (!this.holdTimerArmed) {
        this.holdTimerArmed = true;
        this.options.timers.set(() => this.flush(), nf.reorderHoldMs);
      }
      return;
    }
    this.dispatch(entry);
  }

  /** Delivers held (reordering) messages now, newest first. */
  flush(): void {
    this.holdTimerArmed = false;
    const batch = this.held.reverse();
    this.held = [];
    for (const entry of batch) this.dispatch(entry);
  }

  private dispatch(entry: NotificationLogEntry): void {
    const nf = this.state.faults.notifications;
    const copies = 1 + nf.duplicate;
    for (let i = 0; i < copies; i++) this.options.timers.set(() => void this.attempt(entry, 1), nf.delayMs);
  }

  private async attempt(entry: NotificationLogEntry, attempt: number): Promise<void> {
    const counters = this.state.counters;
    entry.attempts += 1;
    counters.notificationAttempts += 1;
    let ok = false;
    try {
      const res = await fetch(entry.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(entry.message),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      ok = res.ok;
    } catch {
      ok = false;
    }
    if (ok) {
      entry.status = 'delivered';
      counters.notificationsSent += 1;
      return;
    }
    counters.notificationFailedAttempts += 1;
    if (attempt >= this.options.maxAttempts) {
      entry.status = 'gave_up';
      counters.notificationsGaveUp += 1;
      return;
    }
    const delay = this.options.backoffMs * 2 ** (attempt - 1);
    this.options.timers.set(() => void this.attempt(entry, attempt + 1), delay);
  }

  reset(): void {
    this.held = [];
    this.holdTimerArmed = false;
  }
}
