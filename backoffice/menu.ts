import type { OperatorRole } from '../db/operators';
import type { Catalog } from './i18n';
import { roleAtLeast } from './roles';

// The menu every signed-in page shows, in order: an entry only to the roles its page opens to
// (the page itself refuses anyone else). The screenshots' manifest records the menu each
// screenshot shows; test/backoffice/screenshots.test.ts compares it with this list.

export const menu = [
  { id: 'queues', href: '/backoffice', words: (t: Catalog) => t.nav.queues, least: 'viewer' },
  { id: 'search', href: '/backoffice/search', words: (t: Catalog) => t.nav.search, least: 'viewer' },
  { id: 'alerts', href: '/backoffice/alerts', words: (t: Catalog) => t.nav.alerts, least: 'viewer' },
  { id: 'audit', href: '/backoffice/audit', words: (t: Catalog) => t.nav.audit, least: 'viewer' },
  { id: 'api-keys', href: '/backoffice/api-keys', words: (t: Catalog) => t.nav.apiKeys, least: 'viewer' },
  {
    id: 'connectors',
    href: '/backoffice/connectors',
    words: (t: Catalog) => t.nav.connectors,
    least: 'viewer',
  },
  { id: 'policy', href: '/backoffice/policy', words: (t: Catalog) => t.nav.policy, least: 'admin' },
  { id: 'brands', href: '/backoffice/brands', words: (t: Catalog) => t.brands.nav, least: 'admin' },
  { id: 'operators', href: '/backoffice/operators', words: (t: Catalog) => t.grants.nav, least: 'admin' },
] as const satisfies ReadonlyArray<{
  id: string;
  href: string;
  words: (t: Catalog) => string;
  least: OperatorRole;
}>;

/** The entries an operator of this role sees. */
export const menuFor = (role: OperatorRole) => menu.filter((m) => roleAtLeast(role, m.least));
