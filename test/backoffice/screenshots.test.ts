import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { menu, menuFor } from '../../backoffice/menu';
import { queueIds } from '../../db/backoffice-queues';
import { operatorRoles } from '../../db/operators';
import { MANIFEST, WIDTHS } from '../helpers/backoffice-pages';

// docs/backoffice's screenshots against the back office as it is now: manifest.json, written by
// the screenshot run beside the PNGs, says what each one shows (its page, menu and queues). A menu
// entry or a queue added without running `npm run screenshots` again fails here; so does a PNG
// changed, added or removed by hand. Each screenshot shows the menu of its operator's role.

const DIR = path.join(__dirname, '../../docs/backoffice');
const AGAIN = 'run `npm run screenshots` and commit docs/backoffice';

const manifestSchema = z.record(
  z.string(),
  z.object({
    path: z.string().startsWith('/backoffice'),
    heading: z.string(),
    menu: z.array(z.string()),
    queues: z.array(z.string()),
    files: z.record(z.string(), z.object({ file: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
  }),
);

const shots = manifestSchema.parse(JSON.parse(readFileSync(path.join(DIR, MANIFEST), 'utf8')));
const entries = Object.entries(shots);

describe("docs/backoffice's screenshots", () => {
  it('are the PNGs the manifest describes, each page at both widths', () => {
    const listed = entries.flatMap(([, s]) => Object.values(s.files).map((f) => f.file)).sort();
    const onDisk = readdirSync(DIR)
      .filter((f) => f.endsWith('.png'))
      .sort();
    expect(onDisk, AGAIN).toEqual(listed);
    for (const [name, shot] of entries) {
      expect(Object.keys(shot.files).sort(), name).toEqual(WIDTHS.map(String).sort());
      for (const { file, sha256 } of Object.values(shot.files)) {
        const png = readFileSync(path.join(DIR, file));
        expect(createHash('sha256').update(png).digest('hex'), `${file}: ${AGAIN}`).toBe(sha256);
      }
    }
  });

  it("show today's menu, as a role sees it, on every signed-in page, and a page for each of its entries", () => {
    const now = operatorRoles.map((role) => menuFor(role).map((m) => m.id));
    const signedIn = entries.filter(([, s]) => !s.path.startsWith('/backoffice/sign-in'));
    expect(signedIn.length).toBeGreaterThan(0);
    for (const [name, shot] of signedIn) expect(now, `${name}: ${AGAIN}`).toContainEqual(shot.menu);
    // The whole menu, an admin's, is shown somewhere.
    expect(
      signedIn.map(([, s]) => s.menu),
      AGAIN,
    ).toContainEqual(menu.map((m) => m.id));
    for (const m of menu)
      expect(
        entries.some(([, s]) => s.path === m.href),
        `no screenshot of ${m.href}: ${AGAIN}`,
      ).toBe(true);
  });

  it('are each linked from docs/backoffice.md, which links no other', () => {
    const page = readFileSync(path.join(DIR, '../backoffice.md'), 'utf8');
    const linked = [
      ...new Set([...page.matchAll(/\(backoffice\/([\w-]+\.png)\)/g)].map((m) => String(m[1]))),
    ].sort();
    const listed = entries.flatMap(([, s]) => Object.values(s.files).map((f) => f.file)).sort();
    expect(linked).toEqual(listed);
  });

  it('show every queue: all of them on the queues page, and each one open', () => {
    const home = entries.filter(([, s]) => s.path === '/backoffice');
    expect(home.length, `no screenshot of the queues page: ${AGAIN}`).toBeGreaterThan(0);
    for (const [name, shot] of home)
      expect([...shot.queues].sort(), `${name}: ${AGAIN}`).toEqual([...queueIds].sort());
    for (const q of queueIds)
      expect(
        entries.some(([, s]) => s.path === `/backoffice/queues/${q}`),
        `no screenshot of the queue ${q}: ${AGAIN}`,
      ).toBe(true);
  });
});
