import type { FlowConnectors } from '../activities/deps';
import type { Logger } from '../common/logger';
import {
  type AccountSources,
  type BrandConnectorSettings,
  connectorSettingsFor,
} from '../connectors/accounts';
import { type BrandConnectorOptions, type BrandConnectors, brandConnectors } from '../connectors/registry';

// Each brand's connectors in the worker (docs/brands.md, Flows on their brand's accounts): built
// once from the brand's accounts and kept, so a brand's flows share one token cache as the
// default brand's do. The brand's records are read again at most every `ttlMs`; the connectors
// are built anew only when a record changed (its settings or a secret's keyed hash), so a brand
// whose accounts stay as they are keeps its connectors, and a change reaches new calls within
// `ttlMs`. The default brand without records of its own is the process's own connectors.

/** How long a brand's records are trusted before they are read again. */
export const BRAND_ACCOUNTS_TTL_MS = 15_000;

/** Bound on reading a brand's records, so a Postgres that does not answer holds no activity long. */
const READ_TIMEOUT_MS = 5_000;

const bounded = <T>(p: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`reading the brand's accounts took over ${READ_TIMEOUT_MS} ms`)),
        READ_TIMEOUT_MS,
      );
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
};

/** How long a replaced brand's connectors stay open for the calls that took them. */
const CLOSE_AFTER_MS = 120_000;

interface Entry {
  fingerprint: string;
  connectors: BrandConnectors;
  checkedAt: number;
}

export interface BrandConnectorCache {
  connectorsFor(brand: string): Promise<FlowConnectors>;
  close(): void;
}

/** What a brand's records say, without opening a secret: a change of any of them changes it. */
const fingerprintOf = (records: Awaited<ReturnType<AccountSources['read']>>) =>
  JSON.stringify((records ?? []).map((r) => [r.connector, r.settings, r.secretHashes]));

export function brandConnectorCache({
  sources,
  options,
  log,
  ttlMs = BRAND_ACCOUNTS_TTL_MS,
  now = Date.now,
  onBuilt,
}: {
  sources: AccountSources;
  options: BrandConnectorOptions;
  log: Logger;
  ttlMs?: number;
  now?: () => number;
  /** Told of each brand's connectors as they are built (the API Pix webhook's registration). */
  onBuilt?: (settings: BrandConnectorSettings, connectors: BrandConnectors) => void;
}): BrandConnectorCache {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Entry>>();
  const closing = new Set<NodeJS.Timeout>();

  const retire = (old: BrandConnectors) => {
    const timer = setTimeout(() => {
      closing.delete(timer);
      old.close();
    }, CLOSE_AFTER_MS);
    timer.unref();
    closing.add(timer);
  };

  const refresh = async (brand: string): Promise<Entry> => {
    const was = entries.get(brand);
    let records: Awaited<ReturnType<AccountSources['read']>>;
    try {
      records = await bounded(sources.read(brand));
    } catch (err) {
      // Postgres not answering: a brand already built keeps its connectors, as the default
      // brand's never depended on Postgres, and its records are read again after the bound.
      if (!was) throw err;
      log.warn(
        { brand, err: String(err) },
        "a brand's accounts could not be read again; its connectors kept",
      );
      was.checkedAt = now();
      return was;
    }
    const fingerprint = fingerprintOf(records);
    if (was && was.fingerprint === fingerprint && records) {
      was.checkedAt = now();
      return was;
    }
    // NoSuchBrand when `records` is undefined: the activity fails for good (brand-connectors.ts).
    const settings = await connectorSettingsFor(brand, { ...sources, read: async () => records });
    const entry = { fingerprint, connectors: brandConnectors(settings, options), checkedAt: now() };
    entries.set(brand, entry);
    onBuilt?.(settings, entry.connectors);
    if (was) {
      retire(was.connectors);
      log.info({ brand }, "brand's connector accounts changed: its connectors built again");
    }
    return entry;
  };

  return {
    async connectorsFor(brand) {
      const cached = entries.get(brand);
      let entry = cached && now() - cached.checkedAt < ttlMs ? cached : undefined;
      if (!entry) {
        let once = pending.get(brand);
        if (!once) {
          once = refresh(brand).finally(() => pending.delete(brand));
          pending.set(brand, once);
        }
        entry = await once;
      }
      return { provider: entry.connectors.provider, collectors: entry.connectors.collectors };
    },
    close() {
      for (const timer of closing) clearTimeout(timer);
      closing.clear();
      for (const { connectors } of entries.values()) connectors.close();
      entries.clear();
    },
  };
}
