// Every timer the sandbox starts, so close() can cancel them all.
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<() => void>();
  private closed = false;

  set(fn: () => void, ms: number): void {
    if (this.closed) return;
    const t = setTimeout(() => {
      this.pending.delete(t);
      fn();
    }, ms);
    this.pending.add(t);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || ms <= 0) return resolve();
      const wake = () => {
        this.sleepers.delete(wake);
        resolve();
      };
      this.sleepers.add(wake);
      this.set(wake, ms);
    });
  }

  clearAll(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
    // Requests sleeping in a latency fault continue at once instead of hanging.
    for (const wake of [...this.sleepers]) wake();
  }

  close(): void {
    this.closed = true;
    this.clearAll();
  }
}
