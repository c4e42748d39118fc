// UTC calendar arithmetic on "epoch days" (days since 1970-01-01). Everything in the demo
// generator is keyed by epoch day so that no local time zone can leak into the output.

export const MS_PER_DAY = 86_400_000;

export function parseDay(text: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) throw new Error(`not a YYYY-MM-DD day: ${text}`);
  const ms = Date.parse(`${text}T00:00:00Z`);
  if (Number.isNaN(ms) || formatDay(ms / MS_PER_DAY) !== text) throw new Error(`not a calendar day: ${text}`);
  return ms / MS_PER_DAY;
}

export function formatDay(epochDay: number): string {
  return new Date(epochDay * MS_PER_DAY).toISOString().slice(0, 10);
}

export function formatMonth(epochDay: number): string {
  return formatDay(epochDay).slice(0, 7);
}

export function formatInstant(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** 1..12 */
export function monthOf(epochDay: number): number {
  return new Date(epochDay * MS_PER_DAY).getUTCMonth() + 1;
}

/** 1..366 */
export function dayOfYear(epochDay: number): number {
  const date = new Date(epochDay * MS_PER_DAY);
  return epochDay - Date.UTC(date.getUTCFullYear(), 0, 1) / MS_PER_DAY + 1;
}

/** The `days` epoch days before `endDay` (exclusive), oldest first. */
export function windowDays(endDay: number, days: number): number[] {
  return Array.from({ length: days }, (_, index) => endDay - days + index);
}

/** Consecutive days grouped by their UTC month, in order. */
export function groupByMonth(days: readonly number[]): { month: string; days: number[] }[] {
  const groups: { month: string; days: number[] }[] = [];
  for (const day of days) {
    const month = formatMonth(day);
    const last = groups[groups.length - 1];
    if (last?.month === month) last.days.push(day);
    else groups.push({ month, days: [day] });
  }
  return groups;
}

/** 1 March on or before `epochDay - leadDays`: where the FWI codes start from standard values. */
export function fireSeasonStart(epochDay: number, leadDays: number): number {
  const date = new Date((epochDay - leadDays) * MS_PER_DAY);
  const year = date.getUTCFullYear();
  const marchFirst = Date.UTC(year, 2, 1) / MS_PER_DAY;
  return marchFirst <= epochDay - leadDays ? marchFirst : Date.UTC(year - 1, 2, 1) / MS_PER_DAY;
}
