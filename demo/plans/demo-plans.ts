// Entry point of the pure side of the demo generator: options in, dataset plans out.

import { z } from 'zod';
import { MS_PER_DAY, formatInstant, parseDay } from '../calendar.ts';
import { burntAreaPlan } from './burnt-area-plan.ts';
import { createEventSource } from '../event-source.ts';
import { fireDangerPlan } from './fire-danger-plan.ts';
import { hotspotPlan } from './hotspot-plan.ts';
import type { DemoDatasetPlan } from './plan.ts';
import { readingPlan } from './reading-plan.ts';
import { demoStations, stationPlan } from './station-plan.ts';

export const DemoOptions = z.object({
  end: z.iso.date(),
  days: z.int().min(1).max(3660),
  seed: z.int(),
  // Upper bound keeps a typo from filling a disk: scale 100 is ~50 M hotspots a year.
  scale: z.number().positive().max(100),
});
export type DemoOptions = z.infer<typeof DemoOptions>;

export function buildDemoPlans(options: DemoOptions): DemoDatasetPlan[] {
  const { days, seed, scale } = DemoOptions.parse(options);
  const endDay = parseDay(options.end);
  const stations = demoStations(seed, scale);
  // Hotspots and burnt areas walk the same days; each gets its own memo so neither evicts
  // what the other still needs.
  return [
    hotspotPlan(seed, endDay, days, createEventSource(seed, scale)),
    burntAreaPlan(seed, scale, endDay, days, createEventSource(seed, scale)),
    fireDangerPlan(seed, endDay, days),
    stationPlan(stations, endDay - days),
    readingPlan(seed, endDay, days, stations),
  ];
}

export interface ChainFile {
  lastRunUtc: string;
  lastSuccessUtc: string;
  available: true;
  message: string;
}

/** The `_chain.json` a feeding chain would leave: it "ran" at the window's end, never "now". */
export function chainFile(end: string, seed: number, rows: number, files: number): ChainFile {
  const ranAt = formatInstant(parseDay(end) * MS_PER_DAY);
  return {
    lastRunUtc: ranAt,
    lastSuccessUtc: ranAt,
    available: true,
    message: `demo data (seed ${seed}): ${rows} rows in ${files} files`,
  };
}
