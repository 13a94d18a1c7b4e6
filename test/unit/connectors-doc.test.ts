import { describe, expect, it } from 'vitest';
import { sectionIsCurrent } from '../../scripts/generated-section';
import {
  API_PIX_PROBLEMS_SECTION,
  apiPixProblemsTable,
  CAPABILITIES_SECTION,
  capabilitiesTable,
  OPEN_POINTS_SECTION,
  openPointsTable,
  STATUS_WORDS_SECTION,
  statusWordsTable,
} from '../../scripts/write-connector-reference';

// docs/connectors.md's tables are the code's: `npm run docs:connectors` rewrites them.

describe('docs/connectors.md', () => {
  it('lists every status word the connectors read, by standing', () => {
    expect(sectionIsCurrent(STATUS_WORDS_SECTION, statusWordsTable())).toBe(true);
  });

  it('says what each connector can do, as each declares it', () => {
    expect(sectionIsCurrent(CAPABILITIES_SECTION, capabilitiesTable())).toBe(true);
  });

  it('says what pixflow makes of every problem type of the API Pix specification it reads', () => {
    expect(sectionIsCurrent(API_PIX_PROBLEMS_SECTION, apiPixProblemsTable())).toBe(true);
  });

  it('says how the identity-payments connector reads both sides of every open point of its document', () => {
    expect(sectionIsCurrent(OPEN_POINTS_SECTION, openPointsTable())).toBe(true);
  });
});
