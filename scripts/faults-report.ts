import { readFileSync } from 'node:fs';
import path from 'node:path';

// Prints the figures table of docs/reliability.md from the fault suite's last run
// (docs/reliability-last-run.json, written by `npm run test:faults`).

const file = process.argv[2] ?? path.resolve(__dirname, '../docs/reliability-last-run.json');
// biome-ignore lint/suspicious/noExplicitAny: the JSON the suite wrote, read field by field
const run: any = JSON.parse(readFileSync(file, 'utf8'));
const out: string[] = [];
const say = (s = '') => out.push(s);
const fmt = (faults: Record<string, number>) =>
  Object.entries(faults)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '-';

say(
  `Run of ${run.startedAt} (${run.mode}), ${Math.round(run.durationMs / 60_000)} min on ${run.machine.cpus} cores, Node ${run.machine.node}.`,
);
say();
say(
  '| scenario | flows (dep/wd/onb) | outcomes | faults injected | flows lost | payouts duplicated | caller retries | minutes |',
);
say('|---|---|---|---|---|---|---|---|');
for (const s of run.scenarios) {
  const o = s.outcomes;
  say(
    `| ${s.name} | ${s.flows.deposits}/${s.flows.withdrawals}/${s.flows.onboardings} | ` +
      `${o.paidDeposits} paid + ${o.expiredDeposits} expired deposits, ${o.settledWithdrawals} settled + ${o.failedWithdrawals} failed payouts, ` +
      `${o.approved} approved + ${o.rejected} rejected onboardings, ${o.notificationsInInbox}/${o.notificationsAcknowledged} acked notifications in the inbox | ` +
      `${fmt(s.faultsInjected)} | ${s.flowsLost} | ${s.payoutsDuplicated} | ${s.callerRetries} | ${(s.durationMs / 60_000).toFixed(1)} |`,
  );
}
const t = run.totals;
say(
  `| **total** | ${t.deposits}/${t.withdrawals}/${t.onboardings} (${t.flows} flows) | | | **${t.flowsLost}** | **${t.payoutsDuplicated}** | | ${(run.durationMs / 60_000).toFixed(1)} |`,
);
process.stdout.write(`${out.join('\n')}\n`);
