import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { maskCpf } from '../common/mask';
import type { RescreeningCounts, RescreeningProgress } from '../contracts/rescreening';
import { activeCustomersPage } from '../db/eligibility';
import type { ActivityDeps } from './deps';

const DAY_MS = 86_400_000;

interface BatchHeartbeat {
  cursor: string | null;
  counts: RescreeningCounts;
}

export function createRescreeningActivities(
  deps: Pick<ActivityDeps, 'pool' | 'rescreening' | 'openCpf' | 'policy'>,
) {
  return {
    /**
     * Screens the next `limit` active customers after `after` (purpose `rescreening`), at most
     * `perSecond` a second, heartbeating the cursor after each: a retry (its worker killed)
     * resumes after the last person it handled, with the counts so far. Idempotent: a person
     * screened twice records the same answer (the event only on a change), and a fresh answer is
     * reused rather than asked again.
     */
    async rescreenBatch(input: {
      startedAt: string;
      after: string | null;
      limit: number;
    }): Promise<RescreeningProgress> {
      const { pool, rescreening, openCpf } = deps;
      const counts: RescreeningCounts = { screened: 0, impeded: 0, unavailable: 0, noCpf: 0 };
      // No registry configured: no one is screened, the pass ends at once.
      if (!rescreening || !openCpf) return { ...counts, cursor: input.after, done: true };
      const ctx = Context.current();
      const resumed = ctx.info.heartbeatDetails as BatchHeartbeat | undefined;
      let cursor = resumed?.cursor ?? input.after;
      if (resumed) Object.assign(counts, resumed.counts);
      const handledBefore = resumed ? counts.screened + counts.noCpf : 0;
      // Active within the policy's days, as in force at each batch.
      const { rescreenActiveDays } = (await deps.policy.current()).policy.eligibility;
      const since = new Date(Date.parse(input.startedAt) - rescreenActiveDays * DAY_MS);
      const page = await activeCustomersPage(pool, {
        since,
        after: cursor,
        limit: Math.max(0, input.limit - handledBefore),
      });
      // Paced from the batch's start, each person a full spacing after the previous one (the first
      // after the last batch's): `perSecond` at most across batches too, whatever the registry's speed.
      const spacingMs = 1000 / rescreening.perSecond;
      const began = Date.now();
      for (const [i, person] of page.entries()) {
        const wait = began + (i + 1) * spacingMs - Date.now();
        if (wait > 0) await sleep(wait, undefined, { signal: ctx.cancellationSignal });
        if (!person.cpfSealed) counts.noCpf += 1;
        else {
          const cpf = openCpf(person.cpfSealed);
          const screening = await rescreening.screen(cpf);
          counts.screened += 1;
          if (screening.status === 'impeded') {
            counts.impeded += 1;
            ctx.log.info('rescreening found a person impeded', {
              cpf: maskCpf(cpf),
              reason: screening.reason,
            });
          } else if (screening.status === 'unavailable') counts.unavailable += 1;
        }
        cursor = person.cpfHash;
        ctx.heartbeat({ cursor, counts } satisfies BatchHeartbeat);
      }
      return { ...counts, cursor, done: handledBefore + page.length < input.limit };
    },
  };
}
