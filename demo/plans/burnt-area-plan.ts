// Burnt areas: EFFIS maps a share of the larger fires. A perimeter belongs to the same event
// as its hotspots (same centre, same size), and its FIREDATE is the event's ignition.

import { MS_PER_DAY, groupByMonth, windowDays } from '../calendar.ts';
import type { EventSource } from '../event-source.ts';
import type { FireEvent } from '../fire-events.ts';
import { buildPerimeter } from '../perimeter.ts';
import type { DemoDatasetPlan, DemoPartition, StageColumn, StageValue } from './plan.ts';
import { rngFor, type Rng } from '../random.ts';
import { countryOf, placesOf } from '../regions.ts';

export const LAND_COVER_COLUMNS = [
  'BROADLEA', 'CONIFER', 'MIXED', 'SCLEROPH', 'TRANSIT', 'OTHERNATLC', 'AGRIAREAS', 'ARTIFSURF', 'OTHERLC',
] as const;

// Typical land cover of burnt land (relative weights, same order as the columns):
// eucalyptus and pine in Portugal, shrubland in Spain and Greece, moorland in Scotland.
const LAND_COVER_PROFILES: Record<string, readonly number[]> = {
  PT: [22, 20, 8, 14, 20, 3, 10, 1, 2],
  ES: [10, 12, 5, 28, 20, 5, 16, 1, 3],
  GR: [6, 18, 4, 32, 16, 8, 13, 2, 1],
  GB: [3, 10, 2, 1, 5, 70, 6, 1, 2],
};
const DEFAULT_PROFILE = [12, 14, 6, 22, 18, 6, 16, 2, 4];
const MIN_MAPPED_HA = 100;

const STAGE: readonly StageColumn[] = [
  { name: 'id', type: 'BIGINT' }, { name: 'FIREDATE', type: 'TIMESTAMPTZ' }, { name: 'LASTUPDATE', type: 'TIMESTAMPTZ' },
  { name: 'FINALDATE', type: 'TIMESTAMPTZ' }, { name: 'COUNTRY', type: 'VARCHAR' }, { name: 'PROVINCE', type: 'VARCHAR' },
  { name: 'COMMUNE', type: 'VARCHAR' }, { name: 'AREA_HA', type: 'DOUBLE' },
  ...LAND_COVER_COLUMNS.map((name): StageColumn => ({ name, type: 'DOUBLE' })),
  { name: 'PERCNA2K', type: 'DOUBLE' }, { name: 'CLASS', type: 'VARCHAR' }, { name: 'wkt', type: 'VARCHAR' },
];

const quoted = (name: string): string => `"${name}"`;
const SELECT_SQL = `SELECT ${STAGE.filter((column) => column.name !== 'wkt').map((column) => quoted(column.name)).join(', ')},
  wkt::GEOMETRY('OGC:CRS84') AS geometry
FROM demo_stage
ORDER BY "FIREDATE", id`;

export function burntAreaPlan(seed: number, scale: number, endDay: number, days: number, events: EventSource): DemoDatasetPlan {
  // `scale` multiplies fires so hotspots grow; EFFIS maps a fixed few a day, so the mapped
  // share shrinks with it and perimeters stay at a realistic count.
  const mappedShare = 0.4 / Math.max(1, scale);
  return {
    dataset: 'burnt-areas',
    stage: STAGE,
    selectSql: SELECT_SQL,
    partitions: function* (): Generator<DemoPartition> {
      for (const { month, days: monthDays } of groupByMonth(windowDays(endDay, days))) {
        const rows: StageValue[][] = [];
        for (const day of monthDays) {
          for (const event of events.startingOn(day)) {
            const row = perimeterRow(seed, event, endDay * MS_PER_DAY, mappedShare);
            if (row) rows.push(row);
          }
        }
        yield { dirs: [`month=${month}`], rows };
      }
    },
  };
}

function perimeterRow(seed: number, event: FireEvent, endMs: number, mappedShare: number): StageValue[] | null {
  const rng = rngFor(seed, 401, event.seed);
  if (!event.area || event.areaHa < MIN_MAPPED_HA || !rng.chance(mappedShare)) return null;
  const perimeter = buildPerimeter(rng, event, event.radiusKm);
  const place = rng.pick(placesOf(event.area));
  const fireDate = event.ignitionMs;
  const lastUpdate = Math.min(endMs, fireDate + Math.round((event.durationDays + 1 + 3 * rng.next()) * 1440) * 60_000);
  const finalDate = fireDate + (event.durationDays + 3) * MS_PER_DAY <= endMs ? fireDate + event.durationDays * MS_PER_DAY : null;
  return [
    event.id, fireDate, lastUpdate, finalDate, countryOf(event.area.iso2).effis, place.province, rng.pick(place.communes),
    round(perimeter.areaHa, 2), ...landCover(rng, event.area.iso2), rng.chance(0.45) ? 0 : round(100 * rng.next() ** 1.5, 2),
    fireDate >= endMs - 30 * MS_PER_DAY ? '30DAYS' : 'FireSeason', perimeter.wkt,
  ];
}

/** Percentages of the burnt land per class, summing to 100 up to rounding. */
function landCover(rng: Rng, iso2: string): number[] {
  const profile = LAND_COVER_PROFILES[iso2] ?? DEFAULT_PROFILE;
  // Small fires burn through only a few classes: drop some, never all.
  const weights = profile.map((weight) => (rng.chance(0.3) ? 0 : weight * -Math.log(1 - rng.next())));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return profile.map((_, index) => (index === 3 ? 100 : 0));
  return weights.map((weight) => round((100 * weight) / total, 2));
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
