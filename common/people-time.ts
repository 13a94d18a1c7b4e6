// One time zone rule on every page: people read times on São Paulo's clock (where Pix, the
// customers and the operators are), with the offset said; machine fields (JSON, datetime
// attributes, logs) stay ISO 8601 in UTC.

export const PEOPLE_TIME_ZONE = 'America/Sao_Paulo';

const clockFormat = new Intl.DateTimeFormat('pt-BR', {
  timeZone: PEOPLE_TIME_ZONE,
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});
const dateTimeFormat = new Intl.DateTimeFormat('pt-BR', {
  timeZone: PEOPLE_TIME_ZONE,
  dateStyle: 'short',
  timeStyle: 'medium',
});
const zoneFormat = new Intl.DateTimeFormat('en-US', { timeZone: PEOPLE_TIME_ZONE, timeZoneName: 'short' });

/** The zone as a person reads it at that instant: "GMT-3". */
const zoneAt = (d: Date) => zoneFormat.formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? '';

/** "12:03:05 GMT-3": the time of day in São Paulo. */
export const peopleClock = (ms: number): string => `${clockFormat.format(ms)} ${zoneAt(new Date(ms))}`;

/** "25/11/2026, 12:03:05 GMT-3", as the back office writes a time. */
export const peopleDateTime = (ms: number): string => `${dateTimeFormat.format(ms)} ${zoneAt(new Date(ms))}`;
