import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerMetrics } from '../../common/metrics';
import {
  claimHalfOpenTry,
  connectorBreakers,
  openBreakers,
  recordChargeOutcome,
} from '../../db/connector-breakers';
import { testPool } from '../helpers/postgres';

// The connectors' breakers in the run's real Postgres: what every worker reads and writes.

const pool = testPool();
afterAll(() => pool.end());

const settings = { failures: 3, windowMs: 60_000, coolDownMs: 30_000 };
const at = (ms: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, 0) + ms);
/** A connector name no other test uses. */
const fresh = () => `c-${randomBytes(4).toString('hex')}`;
const fail = (name: string, ms: number) => recordChargeOutcome(pool, name, false, settings, at(ms));
const succeed = (name: string, ms: number) => recordChargeOutcome(pool, name, true, settings, at(ms));

describe("a connector's breaker", () => {
  it('is closed for a connector never recorded', async () => {
    const name = fresh();
    expect(await connectorBreakers(pool, [name], at(0))).toEqual([
      { connector: name, state: 'closed', failures: 0 },
    ]);
    expect(await openBreakers(pool, [name], at(0))).toEqual(new Set());
  });

  it('opens at the N-th failure within the window, until now + cool-down', async () => {
    const name = fresh();
    expect((await fail(name, 0)).state).toBe('closed');
    expect((await fail(name, 10_000)).state).toBe('closed');
    const opened = await fail(name, 20_000);
    expect(opened).toMatchObject({ state: 'open', failures: 3, openUntil: at(50_000).toISOString() });
    expect(await openBreakers(pool, [name, fresh()], at(49_999))).toEqual(new Set([name]));
  });

  it('counts failures only within the window: older ones start a new count', async () => {
    const name = fresh();
    await fail(name, 0);
    await fail(name, 10_000);
    // The window began at 0: a failure after 60 s counts from one again.
    expect(await fail(name, 61_000)).toMatchObject({ state: 'closed', failures: 1 });
    expect(await fail(name, 62_000)).toMatchObject({ state: 'closed', failures: 2 });
    expect((await connectorBreakers(pool, [name], at(200_000), settings.windowMs))[0]?.failures).toBe(0);
  });

  it('a success closes it and clears the count', async () => {
    const name = fresh();
    await fail(name, 0);
    await fail(name, 1_000);
    expect(await succeed(name, 2_000)).toMatchObject({ state: 'closed', failures: 0 });
    await fail(name, 3_000);
    expect(await fail(name, 4_000)).toMatchObject({ state: 'closed', failures: 2 });
  });

  it('after the cool-down is half-open: one deposit takes the try; a success closes it', async () => {
    const name = fresh();
    for (const ms of [0, 1_000, 2_000]) await fail(name, ms);
    // Still open: no try.
    expect(await claimHalfOpenTry(pool, name, at(31_000), 30_000)).toBe(false);
    expect((await connectorBreakers(pool, [name], at(32_000)))[0]?.state).toBe('half_open');
    expect(await openBreakers(pool, [name], at(32_000))).toEqual(new Set());
    expect(await claimHalfOpenTry(pool, name, at(32_000), 30_000)).toBe(true);
    // Another deposit meanwhile does not try it too.
    expect(await claimHalfOpenTry(pool, name, at(33_000), 30_000)).toBe(false);
    expect(await succeed(name, 34_000)).toMatchObject({ state: 'closed', failures: 0 });
    expect(await claimHalfOpenTry(pool, name, at(35_000), 30_000)).toBe(false);
  });

  it('a failure of the half-open try opens it again at once, for another cool-down', async () => {
    const name = fresh();
    for (const ms of [0, 1_000, 2_000]) await fail(name, ms);
    expect(await claimHalfOpenTry(pool, name, at(40_000), 30_000)).toBe(true);
    expect(await fail(name, 41_000)).toMatchObject({ state: 'open', openUntil: at(71_000).toISOString() });
    // A try that never recorded its outcome frees the breaker once its time passed.
    expect(await claimHalfOpenTry(pool, name, at(72_000), 5_000)).toBe(true);
    expect(await claimHalfOpenTry(pool, name, at(76_000), 5_000)).toBe(false);
    expect(await claimHalfOpenTry(pool, name, at(78_000), 5_000)).toBe(true);
  });

  it('a failure while open leaves it open until the same time', async () => {
    const name = fresh();
    for (const ms of [0, 1_000, 2_000]) await fail(name, ms);
    expect(await fail(name, 10_000)).toMatchObject({ state: 'open', openUntil: at(32_000).toISOString() });
  });

  it('counts every failure when workers record at once', async () => {
    const name = fresh();
    const many = { ...settings, failures: 50 };
    await Promise.all(
      Array.from({ length: 20 }, () => recordChargeOutcome(pool, name, false, many, at(1_000))),
    );
    expect((await connectorBreakers(pool, [name], at(1_000)))[0]).toMatchObject({
      state: 'closed',
      failures: 20,
    });
  });
});

describe("the worker's breaker gauges", () => {
  it("show each routed connector's state and failures as Postgres holds them at the scrape", async () => {
    const [closedOne, openOne, halfOpen] = [fresh(), fresh(), fresh()];
    await fail(closedOne, 0);
    const now = Date.now();
    const ago = (ms: number) => now - at(0).getTime() - ms;
    for (let i = 0; i < 3; i += 1) await fail(openOne, ago(0));
    for (let i = 0; i < 3; i += 1) await fail(halfOpen, ago(31_000));
    const metrics = createWorkerMetrics();
    let routed = [closedOne, openOne, halfOpen];
    metrics.watchBreakers(() => connectorBreakers(pool, routed, new Date(), 24 * 3_600_000 * 365));
    const lines = async () => (await metrics.registry.metrics()).split('\n');
    const scraped = await lines();
    expect(scraped).toContain(`pixflow_connector_breaker_state{connector="${closedOne}"} 0`);
    expect(scraped).toContain(`pixflow_connector_breaker_state{connector="${openOne}"} 1`);
    expect(scraped).toContain(`pixflow_connector_breaker_state{connector="${halfOpen}"} 0.5`);
    expect(scraped).toContain(`pixflow_connector_breaker_failures{connector="${openOne}"} 3`);
    // A connector the routing no longer names leaves the gauge.
    routed = [closedOne];
    expect((await lines()).some((l) => l.includes(openOne))).toBe(false);
  });
});
