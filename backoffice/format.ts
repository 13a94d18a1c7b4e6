// How the back office shows money, times and ids to an operator: reais as pt-BR writes them,
// times in the operator's own zone with the zone named.

const brlFormat = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });

export const brl = (centavos: number) => brlFormat.format(centavos / 100);

/** A long id cut for a table cell; the link keeps the whole. */
export const shortId = (id: string) => (id.length > 14 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id);

/** How long ago, in the largest two units: "4 min", "2 h 5 min", "3 d 1 h". */
export function ageOf(iso: string, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** A status change as the audit shows it: "awaiting_review → approved". */
export function changeOf(before: unknown, after: unknown): string {
  const statusOf = (v: unknown) =>
    v && typeof v === 'object' && 'status' in v ? String((v as { status: unknown }).status) : undefined;
  const b = statusOf(before);
  const a = statusOf(after);
  if (!b && !a) return '';
  return `${b ?? '—'} → ${a ?? '—'}`;
}

export interface Formatter {
  brl: typeof brl;
  shortId: typeof shortId;
  time: (iso: string) => string;
  age: (iso: string) => string;
  change: typeof changeOf;
}

export function formatterFor(timeZone: string, now = new Date()): Formatter {
  const timeFormat = new Intl.DateTimeFormat('pt-BR', {
    timeZone,
    dateStyle: 'short',
    timeStyle: 'medium',
  });
  const zoneName = (d: Date) =>
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' })
      .formatToParts(d)
      .find((p) => p.type === 'timeZoneName')?.value ?? timeZone;
  return {
    brl,
    shortId,
    time: (iso) => {
      const d = new Date(iso);
      return `${timeFormat.format(d)} ${zoneName(d)}`;
    },
    age: (iso) => ageOf(iso, now),
    change: changeOf,
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
