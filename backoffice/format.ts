import { escapeHtml } from '../common/html';
import { type Catalog, catalogFor, type Language } from './i18n';

// How the back office shows money, times and ids to an operator: in their language's way of
// writing them (pt-BR: R$ 1.234,56 and 26/11/2026; English: en-GB, day first too), times in the
// operator's own zone with the zone named. Machine fields (datetime and data- attributes) keep
// ISO 8601 in UTC.

/** A long id cut for a table cell; the link keeps the whole. */
export const shortId = (id: string) => (id.length > 14 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id);

/** How long ago, in the largest two units: "4 min", "2 h 5 min", "3 d 1 h". */
export function ageOf(iso: string, now: Date, say: Catalog['age'] = catalogFor('pt-BR').age): string {
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 60) return say.s(s);
  const m = Math.floor(s / 60);
  if (m < 60) return say.min(m);
  const h = Math.floor(m / 60);
  if (h < 24) return say.h(h, m % 60);
  return say.d(Math.floor(h / 24), h % 24);
}

/** A CPF as pages write it, whole or masked (***.456.789-**). */
const CPF_SHOWN = /(?:\*{3}|\d{3})\.\d{3}\.\d{3}-(?:\*{2}|\d{2})/g;

/**
 * Text as HTML, escaped, each CPF in it kept on one line: a line break at its hyphen reads as two
 * numbers.
 */
export const withCpfs = (text: string): string =>
  escapeHtml(text).replace(CPF_SHOWN, (cpf) => `<span class="cpf">${cpf}</span>`);

export interface Formatter {
  brl: (centavos: number) => string;
  shortId: typeof shortId;
  /** An instant, to the second, in the operator's zone, named. */
  time: (iso: string) => string;
  /** A calendar day given as YYYY-MM-DD. */
  day: (isoDay: string) => string;
  age: (iso: string) => string;
  /** How long until an instant, as `age` says it; 0 s once it has passed. */
  left: (iso: string) => string;
  withCpfs: typeof withCpfs;
}

export function formatterFor(timeZone: string, lang: Language, now = new Date()): Formatter {
  const t = catalogFor(lang);
  const brlFormat = new Intl.NumberFormat(t.intl, { style: 'currency', currency: 'BRL' });
  const timeFormat = new Intl.DateTimeFormat(t.intl, { timeZone, dateStyle: 'short', timeStyle: 'medium' });
  const zoneFormat = new Intl.DateTimeFormat(t.intl, { timeZone, timeZoneName: 'short' });
  const dayFormat = new Intl.DateTimeFormat(t.intl, { timeZone: 'UTC', dateStyle: 'short' });
  return {
    brl: (centavos) => brlFormat.format(centavos / 100),
    shortId,
    time: (iso) => {
      const d = new Date(iso);
      const zone = zoneFormat.formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? timeZone;
      return `${timeFormat.format(d)} ${zone}`;
    },
    day: (isoDay) => dayFormat.format(new Date(`${isoDay}T12:00:00Z`)),
    age: (iso) => ageOf(iso, now, t.age),
    left: (iso) => ageOf(now.toISOString(), new Date(iso), t.age),
    withCpfs,
  };
}

/** Whether a zone name is one Intl knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
