import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAILY_PAYOUT_LIMIT_CENTAVOS, onboardPeople, type People } from '../helpers/people';
import { type EventsBackend, startEventsBackend } from './events-check';
import { Harness } from './harness';
import { RACE_REQUESTS, runLimitRace } from './limit-race';
import {
  FULL,
  PEOPLE,
  runScenario,
  SCENARIO_TIMEOUT_MS,
  SCENARIOS,
  type ScenarioFigures,
  STACK,
  writeFigures,
} from './scenarios';

// The fault suite: every part of the stack a real process, a mixed load per scenario,
// one fault per scenario, and every flow checked against the sandbox's records. Two brands
// share the load, each on its own provider account. `npm run
// test:faults` is the full run (FAULTS_FULL=1); `npm test` runs a lighter load.

const figures: ScenarioFigures[] = [];
const startedAt = Date.now();
let h: Harness;
/** Onboarded (approved) once, before any fault: money moves only for them. */
let people: People;
let backend: EventsBackend;

describe.sequential(`fault suite (${FULL ? 'full' : 'light'} run)`, () => {
  beforeAll(async () => {
    h = new Harness({ ...STACK, verbose: Boolean(process.env.FAULTS_VERBOSE) });
    await h.start();
    // Subscribed first: every flow's events from here on reach it.
    backend = await startEventsBackend(h);
    // Brand B meets each person too: a brand moves only the money of people it onboarded.
    people = await onboardPeople(h.people, PEOPLE, { alsoMetBy: [h.brandBKey] });
  }, 240_000);

  afterAll(async () => {
    if (figures.length > 0) {
      const file = writeFigures(figures, startedAt);
      process.stdout.write(`fault suite figures: ${file}\n`);
    }
    await h?.stop();
    await backend?.close();
  }, 120_000);

  it('limit-race: one person asks 14 withdrawals at once at two brands against the one daily limit, while the worker is down', async () => {
    const race = await runLimitRace(h);
    process.stderr.write(`[faults] limit-race: ${JSON.stringify(race)}\n`);
    expect(race.problems).toEqual([]);
    expect(race.passed + race.refused).toBe(RACE_REQUESTS);
    // Both brands' payouts took part in the one limit.
    expect(Object.values(race.passedByBrand).every((n) => n > 0)).toBe(true);
    expect(race.sentCentavos).toBeLessThanOrEqual(DAILY_PAYOUT_LIMIT_CENTAVOS);
  }, 240_000);

  for (const scenario of SCENARIOS) {
    it(
      `${scenario.name}: ${scenario.description}`,
      async () => {
        const f = await runScenario(h, scenario, people, backend);
        figures.push(f);
        expect(f.problems, `${scenario.name}: ${f.problems.length} problems`).toEqual([]);
        expect(f.flowsLost).toBe(0);
        expect(f.payoutsDuplicated).toBe(0);
      },
      SCENARIO_TIMEOUT_MS,
    );
  }
});
