// The sensor network: real-looking stations in fire-prone areas, every eighth one a
// simulated demo station (the spec's `simulated` flag). The list depends on seed and scale
// only; installation dates are placed before the window so every reading has a station.

import { MS_PER_DAY } from '../calendar.ts';
import type { DemoDatasetPlan, StageColumn } from './plan.ts';
import { pickWeighted, rngFor } from '../random.ts';
import { ADMIN_AREAS, COUNTRIES, placesOf } from '../regions.ts';

export const MIN_STATIONS = 40;
const SIMULATED_EVERY = 8;
const SITE_WORDS = ['Ridge', 'Valley', 'Forest', 'Plateau', 'Mast', 'Summit', 'Pass', 'Firebreak'];

export interface DemoStation {
  stationId: string;
  name: string;
  lat: number;
  lon: number;
  elevationM: number;
  simulated: boolean;
  /** Days before the window's first day (>= 60). */
  installedDaysBefore: number;
  installedHourUtc: number;
  placeKey: number;
  regionKey: number;
}

const STAGE: readonly StageColumn[] = [
  { name: 'stationId', type: 'VARCHAR' }, { name: 'name', type: 'VARCHAR' }, { name: 'latitude', type: 'DOUBLE' },
  { name: 'longitude', type: 'DOUBLE' }, { name: 'elevationM', type: 'DOUBLE' }, { name: 'simulated', type: 'BOOLEAN' },
  { name: 'installedAtUtc', type: 'TIMESTAMPTZ' },
];
const SELECT_SQL = `SELECT ${STAGE.map((column) => `"${column.name}"`).join(', ')} FROM demo_stage ORDER BY "stationId"`;

/** Readings volume follows `scale` through the number of stations (the cadence is fixed). */
export function demoStations(seed: number, scale: number): DemoStation[] {
  const count = Math.max(MIN_STATIONS, Math.round(MIN_STATIONS * scale));
  const usedNames = new Map<string, number>();
  return Array.from({ length: count }, (_, index) => {
    const rng = rngFor(seed, 601, index);
    // +1: every area gets stations, fire-prone ones more.
    const area = pickWeighted(ADMIN_AREAS, (candidate) => candidate.fireWeight + 1, rng);
    const [west, south, east, north] = area.box;
    const place = rng.pick(placesOf(area));
    const baseName = `${rng.pick(place.communes)} ${rng.pick(SITE_WORDS)}`;
    const seen = (usedNames.get(baseName) ?? 0) + 1;
    usedNames.set(baseName, seen);
    const simulated = (index + 1) % SIMULATED_EVERY === 0;
    const name = `${simulated ? 'Demo ' : ''}${baseName}${seen > 1 ? ` ${seen}` : ''}`;
    return {
      stationId: `ST${String(index + 1).padStart(4, '0')}`,
      name,
      lat: Math.round(rng.between(south + 0.01, north - 0.01) * 1e5) / 1e5,
      lon: Math.round(rng.between(west + 0.01, east - 0.01) * 1e5) / 1e5,
      elevationM: Math.round(Math.min(1800, 40 + rng.logNormal(Math.log(450), 0.6))),
      simulated,
      installedDaysBefore: 60 + rng.int(1500),
      installedHourUtc: 7 + rng.int(10),
      placeKey: 5000 + index,
      regionKey: COUNTRIES.findIndex((country) => country.iso2 === area.iso2),
    };
  });
}

export function stationPlan(stations: readonly DemoStation[], firstDay: number): DemoDatasetPlan {
  return {
    dataset: 'sensor-stations',
    stage: STAGE,
    selectSql: SELECT_SQL,
    partitions: function* () {
      yield {
        dirs: [],
        rows: stations.map((station) => [
          station.stationId, station.name, station.lat, station.lon, station.elevationM, station.simulated,
          (firstDay - station.installedDaysBefore) * MS_PER_DAY + station.installedHourUtc * 3_600_000,
        ]),
      };
    },
  };
}
