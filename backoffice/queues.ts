import { Router } from 'express';
import { cpfHash } from '../common/pii';
import {
  countQueues,
  IMPEDED_QUEUE,
  listImpeded,
  listQueue,
  type QueueId,
  type QueueItem,
  queueIds,
} from '../db/backoffice-queues';
import type { BackofficeDeps } from './deps';
import { parseForm, queueFiltersSchema, startOfDayIn } from './forms';
import type { Catalog, Label } from './i18n';
import { brandChoicesOf, brandsFor } from './operators';
import { notFoundPage, page, signedIn, wordsOf } from './render';

// The queues: what waits for a person, each with its count, the age of its oldest case and
// filters by person and by when the case started waiting. Their titles and help are in i18n.ts.

const PAGE_SIZE = 100;

/** The one line a queue's table says about a case beyond its amount and age. */
export function detailOf(f: QueueItem, t: Catalog, label: Label): string {
  const d = f.details;
  const say = t.queue.detail;
  switch (f.type) {
    case 'onboarding':
      return [
        say.kyc(label.registryStatus(f.kycStatus)),
        f.pep ? say.pep : undefined,
        typeof d.livenessStatus === 'string' ? say.liveness(label.liveness(d.livenessStatus)) : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
    case 'deposit':
      return [
        typeof d.payerName === 'string' && d.payerName ? say.payer(d.payerName) : undefined,
        typeof d.payerCpfMasked === 'string' && d.payerCpfMasked ? say.payerCpf(d.payerCpfMasked) : undefined,
        f.reason ? label.reason(f.reason) : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
    default:
      return label.reason(f.reason);
  }
}

export const isQueueId = (q: string): q is QueueId => (queueIds as readonly string[]).includes(q);

export function queueRoutes({ pool, config, policy }: BackofficeDeps) {
  const r = Router();
  r.get('/', async (req, res) => {
    page(req, res, 'home', { counts: await countQueues(pool, brandsFor(res)) });
  });
  r.get('/queues/counts', async (req, res) => {
    page(req, res, 'queue-counts', { counts: await countQueues(pool, brandsFor(res)) });
  });
  // People, not flows: filtered by person only, the least time left to close first.
  r.get(`/queues/${IMPEDED_QUEUE}`, async (req, res) => {
    const filters = parseForm(
      queueFiltersSchema.pick({ cpf: true }),
      req.query,
      `/backoffice/queues/${IMPEDED_QUEUE}`,
      wordsOf(req, res),
      { kind: 'filter' },
    );
    const { items, total } = await listImpeded(pool, {
      cpfHash: filters.cpf ? cpfHash(filters.cpf, config.PII_HASH_KEY) : undefined,
      closeWithinMs: (await policy.current()).policy.eligibility.impededCloseWithinMs,
      limit: PAGE_SIZE,
    });
    page(req, res, 'impeded-queue', {
      queue: IMPEDED_QUEUE,
      filters: { cpf: typeof req.query.cpf === 'string' ? req.query.cpf : '' },
      items,
      total,
      now: new Date().toISOString(),
    });
  });
  r.get('/queues/:queue', async (req, res) => {
    const queue = req.params.queue ?? '';
    if (!isQueueId(queue) || queue === IMPEDED_QUEUE) throw notFoundPage((t) => t.errors.what.queue(queue));
    const zone = signedIn(res).timeZone;
    const t = wordsOf(req, res);
    const filters = parseForm(queueFiltersSchema, req.query, `/backoffice/queues/${queue}`, t, {
      kind: 'filter',
      fieldName: (name) => (name === 'brand' ? t.grants.brand : undefined),
    });
    const { items, total } = await listQueue(pool, queue, {
      cpfHash: filters.cpf ? cpfHash(filters.cpf, config.PII_HASH_KEY) : undefined,
      since: filters.since ? startOfDayIn(zone, filters.since) : undefined,
      until: filters.until ? new Date(startOfDayIn(zone, filters.until).getTime() + 86_400_000) : undefined,
      type: filters.type || undefined,
      brands: brandsFor(res, filters.brand),
      limit: PAGE_SIZE,
    });
    page(req, res, 'queue', {
      queue,
      mixed: queue === 'failed',
      // As typed: the form shows back what the operator wrote.
      filters: {
        cpf: typeof req.query.cpf === 'string' ? req.query.cpf : '',
        since: filters.since,
        until: filters.until,
        type: filters.type ?? '',
        brand: filters.brand ?? '',
      },
      brands: await brandChoicesOf(pool, res),
      items,
      total,
      detailOf,
    });
  });
  return r;
}
