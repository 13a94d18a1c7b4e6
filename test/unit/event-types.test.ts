import { describe, expect, it } from 'vitest';
import {
  ALERT_RAISED,
  CUSTOMER_VERIFICATION_UPDATED,
  eventTypes,
  isEventType,
  WEBHOOK_ENDPOINT_DISABLED,
} from '../../contracts/events';
import * as alerts from '../../db/alerts';
import * as db from '../../db/events';
import { TRIGGERS } from '../../monitoring/monitor';

describe('event types', () => {
  it('the types the database writes itself are in the catalog, spelled alike', () => {
    expect(db.CUSTOMER_VERIFICATION_UPDATED).toBe(CUSTOMER_VERIFICATION_UPDATED);
    expect(db.WEBHOOK_ENDPOINT_DISABLED).toBe(WEBHOOK_ENDPOINT_DISABLED);
    expect(isEventType(CUSTOMER_VERIFICATION_UPDATED)).toBe(true);
    expect(isEventType(WEBHOOK_ENDPOINT_DISABLED)).toBe(true);
    expect(alerts.ALERT_RAISED).toBe(ALERT_RAISED);
    expect(isEventType(ALERT_RAISED)).toBe(true);
  });

  it('the alert monitor evaluates event types pixflow sends', () => {
    for (const t of TRIGGERS) expect(isEventType(t), t).toBe(true);
  });

  it('one type per flow status, no duplicates, nothing else', () => {
    expect(new Set(eventTypes).size).toBe(eventTypes.length);
    expect(eventTypes).toContain('deposit.completed');
    expect(eventTypes).toContain('onboarding.awaiting_review');
    expect(eventTypes).toContain('withdrawal.refused');
    expect(isEventType('deposit.paid')).toBe(false);
    expect(isEventType('*')).toBe(false);
  });
});
