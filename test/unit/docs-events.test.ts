import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../api/openapi';
import { eventTypes } from '../../contracts/events';
import { CUSTOMER_IMPEDED, CUSTOMER_VERIFICATION_UPDATED, WEBHOOK_ENDPOINT_DISABLED } from '../../db/events';

// docs/api.md's events catalog (the `| type | when |` table under "## Events") is what a backend
// subscribes by: it must name every event type pixflow can send, and no other. What pixflow sends
// is contracts/events.ts's list (each flow's statuses, and the two the database writes itself),
// which /openapi.json's webhooks and its endpoints' `events` enum are made from.

const API_PAGE = readFileSync(path.join(__dirname, '../../docs/api.md'), 'utf8');

/** The types the page's events table names: the backticked `<family>.<name>`s of its first column. */
function documentedTypes(page: string): string[] {
  const section = page.split(/^## /m).find((s) => s.startsWith('Events\n'));
  if (!section) throw new Error('docs/api.md has no "## Events" section');
  const table = /^\| type \| when \|\n\|---\|---\|\n((?:\|.*\|\n?)+)/m.exec(section)?.[1];
  if (!table) throw new Error('docs/api.md\'s "## Events" has no `| type | when |` table');
  return table
    .split('\n')
    .filter(Boolean)
    .flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]!));
}

/** Each difference between the page's table and the types sent, in words. */
function catalogProblems(page: string, sent: readonly string[]): string[] {
  const documented = documentedTypes(page);
  return [
    ...sent.filter((t) => !documented.includes(t)).map((t) => `${t}: sent, missing from the table`),
    ...documented.filter((t) => !sent.includes(t)).map((t) => `${t}: in the table, never sent`),
    ...documented.filter((t, i) => documented.indexOf(t) !== i).map((t) => `${t}: in the table twice`),
  ];
}

interface Doc {
  webhooks: Record<string, { post: { description: string } }>;
  components: { schemas: Record<string, { properties: { events: { items: { enum: string[] } } } }> };
}
const doc = buildOpenApiDocument() as unknown as Doc;

describe("docs/api.md's events catalog", () => {
  it('names every event type pixflow sends, and only those', () => {
    expect(documentedTypes(API_PAGE).length).toBeGreaterThan(20);
    expect(catalogProblems(API_PAGE, eventTypes)).toEqual([]);
  });

  it("is what /openapi.json's webhooks and endpoints' events list", () => {
    // Each flow type's webhook says its types: "Types: `deposit.awaiting_payment`, …".
    const inWebhooks = Object.values(doc.webhooks).flatMap((w) =>
      [...w.post.description.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]!),
    );
    expect(catalogProblems(API_PAGE, inWebhooks)).toEqual([]);
    for (const schema of ['WebhookEndpointCreate', 'WebhookEndpointUpdate']) {
      const subscribable = doc.components.schemas[schema]!.properties.events.items.enum.filter(
        (t) => t !== '*',
      );
      expect(catalogProblems(API_PAGE, subscribable), schema).toEqual([]);
    }
  });

  it('counts the types the database writes itself among those sent', () => {
    for (const t of [CUSTOMER_VERIFICATION_UPDATED, CUSTOMER_IMPEDED, WEBHOOK_ENDPOINT_DISABLED])
      expect(eventTypes).toContain(t);
  });

  it('fails for a type left out of the table, or one the table names that is never sent', () => {
    const without = API_PAGE.replace('`deposit.held`, ', '');
    expect(without).not.toBe(API_PAGE);
    expect(catalogProblems(without, eventTypes)).toEqual(['deposit.held: sent, missing from the table']);
    const extra = API_PAGE.replace('`deposit.held`, ', '`deposit.held`, `deposit.refunded`, ');
    expect(catalogProblems(extra, eventTypes)).toEqual(['deposit.refunded: in the table, never sent']);
  });
});
