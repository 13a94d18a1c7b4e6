import type { Catalog } from './i18n';

// The menu every signed-in page shows, in order. The screenshots' manifest records the menu each
// screenshot shows; test/backoffice/screenshots.test.ts compares it with this list.

export const menu = [
  { id: 'queues', href: '/backoffice', words: (t: Catalog) => t.nav.queues },
  { id: 'search', href: '/backoffice/search', words: (t: Catalog) => t.nav.search },
  { id: 'alerts', href: '/backoffice/alerts', words: (t: Catalog) => t.nav.alerts },
  { id: 'audit', href: '/backoffice/audit', words: (t: Catalog) => t.nav.audit },
  { id: 'api-keys', href: '/backoffice/api-keys', words: (t: Catalog) => t.nav.apiKeys },
] as const;
