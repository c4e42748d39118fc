// Memoises fire events by start day while a window is walked day by day: each day needs the
// events of the MAX_EVENT_DAYS before it, so without the memo every day would be made ten times.

import { MAX_EVENT_DAYS, eventsStartingOn, type FireEvent } from './fire-events.ts';

export interface EventSource {
  startingOn(day: number): FireEvent[];
  activeOn(day: number): FireEvent[];
}

export function createEventSource(seed: number, scale: number): EventSource {
  const byStartDay = new Map<number, FireEvent[]>();
  const startingOn = (day: number): FireEvent[] => {
    const cached = byStartDay.get(day);
    if (cached) return cached;
    const events = eventsStartingOn(seed, scale, day);
    byStartDay.set(day, events);
    // Walks go forward in time, so days long behind the walk are never asked for again
    // (and if they are, they are simply made again, identically).
    for (const old of byStartDay.keys()) if (old < day - 3 * MAX_EVENT_DAYS) byStartDay.delete(old);
    return events;
  };
  const activeOn = (day: number): FireEvent[] => {
    const active: FireEvent[] = [];
    for (let start = day - MAX_EVENT_DAYS + 1; start <= day; start += 1) {
      for (const event of startingOn(start)) if (day < event.startDay + event.durationDays) active.push(event);
    }
    return active;
  };
  return { startingOn, activeOn };
}
