import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { countRows } from '../server/data.ts';
import { fullWindow, midMonthDayWindow, monthWindow, type BenchOptions, type DayWindow } from '../lib/options.ts';
import type { ScenarioSpec } from './scenario.ts';
import type { ScenarioName } from '../lib/scenario-names.ts';

export interface Plan {
  /** The extracts compared with DuckDB's COPY, counted whether they run or not: ROW_LIMIT is the same whatever --only says. */
  specs: ScenarioSpec[];
  /** window-sizes' one-day window and its DuckDB count (its month is month-geojson's window, its year year-csv's). */
  day: { window: DayWindow; rows: number };
}

function timeColumn(d: DatasetDescriptor): string {
  if (!d.time) throw new Error(`${d.name} has no time axis`);
  return d.time.column;
}

/** Every window the bench asks for whole, with the row count DuckDB finds in it before the server is asked. */
export async function planScenarios(o: BenchOptions, log: (line: string) => void): Promise<Plan> {
  const year = fullWindow(o);
  const plan = [
    { name: 'year-csv' as const, title: 'hotspots, whole window, CSV', d: hotspots, window: year, format: 'csv' as const },
    { name: 'month-geojson' as const, title: 'hotspots, one month, GeoJSON', d: hotspots, window: monthWindow(o), format: 'geojson' as const },
    { name: 'year-readings-csv' as const, title: 'sensor-readings, whole window, CSV', d: sensorReadings, window: year, format: 'csv' as const },
    { name: 'year-parquet' as const, title: 'hotspots, whole window, Parquet (Accept)', d: hotspots, window: year, format: 'parquet' as const },
    { name: 'year-arrow' as const, title: 'hotspots, whole window, Arrow IPC stream (Accept)', d: hotspots, window: year, format: 'arrow' as const },
  ];
  const day = midMonthDayWindow(o);
  const asks = [...plan.map((p) => ({ dataset: p.d.name, column: timeColumn(p.d), window: p.window })), { dataset: hotspots.name, column: timeColumn(hotspots), window: day }];
  const counts = await countRows(o.dataDir, asks);
  asks.forEach((a, i) => log(`rows (DuckDB count): ${a.dataset} ${a.window.from}..${a.window.to}: ${counts[i]!.toLocaleString('en')}`));
  const specs = plan.map((p, i) => {
    const { d, ...rest } = p;
    return { ...rest, dataset: d.name, timeColumn: timeColumn(d), orderBy: d.orderBy, expectedRows: counts[i]! };
  });
  return { specs, day: { window: day, rows: counts[asks.length - 1]! } };
}

/** The planned extract `name` (year-csv's window is the one-year window every load scenario reads). */
export function planned(plan: Plan, name: ScenarioName): ScenarioSpec {
  const spec = plan.specs.find((s) => s.name === name);
  if (!spec) throw new Error(`${name} is not one of the planned extracts`);
  return spec;
}
