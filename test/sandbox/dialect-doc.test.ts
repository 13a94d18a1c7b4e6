import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPEN_POINT_IDS, OPEN_POINTS } from '../../connectors/identity-payments/open-points';
import { dialectTables } from '../../sandbox/dialect';
import { withSection } from '../../scripts/generated-section';
import { DIALECT_SECTION } from '../../scripts/write-sandbox-dialect';

// docs/sandbox.md's dialect tables are sandbox/dialect.ts's dialectTables(), made from the one
// list of open points and the sandbox's status words: when either changes, this fails until the
// page holds the new tables between its markers (the failure's diff shows them).

const page = readFileSync(DIALECT_SECTION.page, 'utf8');
const section = (text: string) =>
  text.slice(
    text.indexOf(DIALECT_SECTION.begin) + DIALECT_SECTION.begin.length,
    text.indexOf(DIALECT_SECTION.end),
  );

describe("docs/sandbox.md's Dialect section", () => {
  it('holds the tables open-points.ts and the sandbox make, every point with both sides', () => {
    expect(section(page).trim(), 'docs/sandbox.md: run npm run docs:sandbox').toBe(dialectTables());
    expect(withSection(page, DIALECT_SECTION, dialectTables())).toBe(page);
    for (const id of OPEN_POINT_IDS) {
      const p = OPEN_POINTS[id];
      expect(section(page)).toContain(`| \`${id}\` |`);
      for (const side of [p.doc, p.other]) expect(section(page), id).toContain(side.replace(/\|/g, '\\|'));
    }
  });

  it('goes stale when a point changes', () => {
    const stale = dialectTables().replace(OPEN_POINTS['withdraw.duplicate'].other, '422');
    expect(withSection(page, DIALECT_SECTION, stale)).not.toBe(page);
  });
});
