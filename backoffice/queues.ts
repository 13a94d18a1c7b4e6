import { Router } from 'express';
import { cpfHash } from '../common/pii';
import { countQueues, listQueue, type QueueId, type QueueItem, queueIds } from '../db/backoffice-queues';
import type { BackofficeDeps } from './deps';
import { parseForm, queueFiltersSchema, startOfDayIn } from './forms';
import { notFoundPage, page, signedIn } from './render';

// The queues: what waits for a person, each with its count, the age of its oldest case and
// filters by person and by when the case started waiting.

export const queueTitles: Record<QueueId, string> = {
  'onboardings-awaiting-review': 'Onboardings awaiting review',
  'deposits-held': 'Deposits held for a third-party payer',
  'withdrawals-awaiting-biometrics': 'Withdrawals awaiting biometrics',
  failed: 'Failed deposits and withdrawals',
  'reconciliation-gave-up': 'Reconciliation gave up',
};

const queueHelp: Record<QueueId, string> = {
  'onboardings-awaiting-review':
    'KYC passed and the liveness check asks for a person: approve or refuse each one.',
  'deposits-held': 'Paid by someone other than the customer: accept to credit it, or return it to the payer.',
  'withdrawals-awaiting-biometrics':
    'Large or first payouts wait for the customer to pass a biometric check; nothing to decide here, but old ones may need a call.',
  failed: 'The provider refused or failed these. No money moved; the customer may need to be told.',
  'reconciliation-gave-up':
    'Payouts whose outcome the provider never told and no inquiry found before the deadline. Check with the provider before paying again.',
};

const PAGE_SIZE = 100;

/** The one line a queue's table says about a case beyond its amount and age. */
function detailOf(f: QueueItem): string {
  const d = f.details;
  switch (f.type) {
    case 'onboarding':
      return [
        `KYC ${f.kycStatus ?? 'unknown'}`,
        f.pep ? 'PEP' : undefined,
        d.livenessStatus ? `liveness ${d.livenessStatus}` : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
    case 'deposit':
      return [
        d.payerName ? `payer ${d.payerName}` : undefined,
        d.payerCpfMasked ? `CPF ${d.payerCpfMasked}` : undefined,
        f.reason ?? undefined,
      ]
        .filter(Boolean)
        .join(' · ');
    default:
      return f.reason ?? '';
  }
}

export const isQueueId = (q: string): q is QueueId => (queueIds as readonly string[]).includes(q);

export function queueRoutes({ pool, config }: BackofficeDeps) {
  const r = Router();
  r.get('/', async (req, res) => {
    page(req, res, 'home', { counts: await countQueues(pool), queueTitles });
  });
  r.get('/queues/counts', async (req, res) => {
    page(req, res, 'queue-counts', { counts: await countQueues(pool), queueTitles });
  });
  r.get('/queues/:queue', async (req, res) => {
    const queue = req.params.queue ?? '';
    if (!isQueueId(queue)) throw notFoundPage(`queue named “${queue}”`);
    const zone = signedIn(res).timeZone;
    const filters = parseForm(queueFiltersSchema, req.query, `/backoffice/queues/${queue}`);
    const { items, total } = await listQueue(pool, queue, {
      cpfHash: filters.cpf ? cpfHash(filters.cpf, config.PII_HASH_KEY) : undefined,
      since: filters.since ? startOfDayIn(zone, filters.since) : undefined,
      until: filters.until ? new Date(startOfDayIn(zone, filters.until).getTime() + 86_400_000) : undefined,
      type: filters.type || undefined,
      limit: PAGE_SIZE,
    });
    page(req, res, 'queue', {
      queue,
      queueTitle: queueTitles[queue],
      queueHelp: queueHelp[queue],
      mixed: queue === 'failed',
      filters: { ...filters, cpf: typeof req.query.cpf === 'string' ? req.query.cpf : '' },
      items,
      total,
      detailOf,
    });
  });
  return r;
}
