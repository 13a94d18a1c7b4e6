import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The provider's wire stays in its connector (connectors/identity-payments/) and in the sandbox
// that emulates it: no other product file, client or page names one of its fields. The tests
// that play the provider (posting its webhooks, checking its wire) are its tests, not product.

const ROOT = path.resolve(__dirname, '../..');

/** Field names only the provider's wire uses (pixflow's own names differ). */
const WIRE_NAMES = [
  'bankispb',
  'bankbranch',
  'bankaccount',
  'cpf_payer',
  'name_payer',
  'cpf_client',
  'name_client',
  'email_client',
  'external_id_client',
  'datetimepayed',
  'datetimerequest',
  'status_verification',
  'status_onboarding',
  'type_transaction',
  'partner_id',
  'pixPayload',
  'pixImage',
  'payedAt',
  'is_under_18',
  'date_death',
  'is_pep',
  'responseStatus',
  'url_callback',
  'action_type',
  'response_token_validation',
];

/** Where the wire is at home. */
const HOME = [
  /^connectors\/identity-payments\//,
  /^sandbox\//,
  /^test\//,
  /^docs\/sandbox\.md$/,
  /^docs\/connectors\.md$/,
  /^CHANGELOG\.md$/,
  /^db\/migrations\//,
];

/** Files that name a wire field on purpose, and which ones: each with why. */
const NAMED_ON_PURPOSE: Record<string, { names: string[]; why: string }> = {};
const OLD_PAYER_NAMES = {
  names: ['bankispb', 'bankbranch', 'bankaccount'],
  why: "the API's own former names of a payer's account, refused with a 400 saying where each went",
};
for (const file of [
  'starters/requests.ts',
  'api/deposits.ts',
  'clients/openapi.json',
  'clients/typescript/src/generated/schema.ts',
  'docs/api.md',
  'docs/nexus.md',
]) {
  NAMED_ON_PURPOSE[file] = OLD_PAYER_NAMES;
}
NAMED_ON_PURPOSE['docs/production.md'] = {
  names: ['name_payer', 'cpf_payer', 'payedAt', 'datetimepayed'],
  why: 'the conformance command prints what the provider itself answered',
};
for (const file of ['bench/pixflow.ts', 'bench/steps/latency.ts']) {
  NAMED_ON_PURPOSE[file] = { names: ['payedAt'], why: "the bench reads the sandbox's own state" };
}
NAMED_ON_PURPOSE['bench/steps/ingress.ts'] = {
  names: ['partner_id'],
  why: "the bench plays the provider, posting its webhooks to pixflow's ingress",
};

NAMED_ON_PURPOSE['docs/brands.md'] = {
  names: ['partner_id'],
  why: "a brand account's --partner-id is the field the provider's notifications carry, named as they name it",
};

const pattern = new RegExp(`\\b(${WIRE_NAMES.join('|')})\\b`, 'g');

function trackedTextFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && /\.(ts|mts|cjs|js|json|md|eta|yml|yaml|sql|go|py|java)$/.test(f));
}

describe("the provider's wire field names", () => {
  it('appear only in its connector, its sandbox and their tests, or where a file says why', () => {
    const found: string[] = [];
    for (const file of trackedTextFiles()) {
      if (HOME.some((home) => home.test(file))) continue;
      let text: string;
      try {
        text = readFileSync(path.join(ROOT, file), 'utf8');
      } catch {
        continue;
      }
      const allowed = NAMED_ON_PURPOSE[file]?.names ?? [];
      for (const [name] of text.matchAll(pattern)) {
        if (!allowed.includes(name)) found.push(`${file}: ${name}`);
      }
    }
    expect([...new Set(found)]).toEqual([]);
  });

  it('are named on purpose only where they still appear', () => {
    for (const [file, { names }] of Object.entries(NAMED_ON_PURPOSE)) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const present = names.filter((n) => new RegExp(`\\b${n}\\b`).test(text));
      expect(present, file).not.toEqual([]);
    }
  });
});
