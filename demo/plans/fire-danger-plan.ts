// Fire danger: the FWI System run day after day on each area's synthetic noon weather, so the
// sub-indices are mutually consistent. The codes start from the standard values on 1 March
// (at least a month before the window) and are carried to the window's first day.

import { MS_PER_DAY, fireSeasonStart, groupByMonth, monthOf, windowDays } from '../calendar.ts';
import { FWI_START, stepFwi, type FwiCodes, type FwiDay, type FwiWeather } from '../fwi.ts';
import type { DemoDatasetPlan, DemoPartition, StageColumn, StageValue } from './plan.ts';
import { rngFor } from '../random.ts';
import { ADMIN_AREAS, COUNTRIES, boxCentre } from '../regions.ts';
import { clamp, dailyWeather, noonWeather } from '../weather.ts';

/** Two services that compute the same system from different weather inputs. */
export const FIRE_DANGER_MODELS = ['cffdrs-era5', 'effis-ecmwf'] as const;

interface DangerArea {
  level: 'country' | 'adminArea';
  code: string;
  name: string;
}

const STAGE: readonly StageColumn[] = [
  { name: 'date', type: 'TIMESTAMPTZ' }, { name: 'model', type: 'VARCHAR' }, { name: 'level', type: 'VARCHAR' },
  { name: 'areaCode', type: 'VARCHAR' }, { name: 'areaName', type: 'VARCHAR' },
  ...['FWI', 'FFMC', 'DMC', 'DC', 'ISI', 'BUI', 'DSR'].map((name): StageColumn => ({ name, type: 'DOUBLE' })),
];
const SELECT_SQL = `SELECT ${STAGE.map((column) => `"${column.name}"`).join(', ')} FROM demo_stage ORDER BY "date", "areaCode"`;

const countriesWithAreas = COUNTRIES.filter((country) => ADMIN_AREAS.some((area) => area.iso2 === country.iso2));
const DANGER_AREAS: readonly DangerArea[] = [
  ...countriesWithAreas.map((country): DangerArea => ({ level: 'country', code: country.iso2, name: country.name })),
  ...ADMIN_AREAS.map((area): DangerArea => ({ level: 'adminArea', code: area.nuts, name: area.name })),
];

export function fireDangerPlan(seed: number, endDay: number, days: number): DemoDatasetPlan {
  return {
    dataset: 'fire-danger',
    stage: STAGE,
    selectSql: SELECT_SQL,
    partitions: function* (): Generator<DemoPartition> {
      const window = windowDays(endDay, days);
      const firstDay = window[0] ?? endDay;
      for (const [modelIndex, model] of FIRE_DANGER_MODELS.entries()) {
        let codes: FwiCodes[] = DANGER_AREAS.map(() => FWI_START);
        for (let day = fireSeasonStart(firstDay, 30); day < firstDay; day += 1) {
          codes = stepAll(codes, modelWeather(seed, modelIndex, day), day);
        }
        for (const { month, days: monthDays } of groupByMonth(window)) {
          const rows: StageValue[][] = [];
          for (const day of monthDays) {
            const today = stepAll(codes, modelWeather(seed, modelIndex, day), day);
            DANGER_AREAS.forEach((area, index) => {
              const values = today[index];
              if (values) rows.push(dangerRow(day, model, area, values));
            });
            codes = today;
          }
          yield { dirs: [`model=${model}`, `month=${month}`], rows };
        }
      }
    },
  };
}

function stepAll(codes: readonly FwiCodes[], weather: readonly FwiWeather[], day: number): FwiDay[] {
  return weather.map((today, index) => stepFwi(codes[index] ?? FWI_START, today, monthOf(day)));
}

function dangerRow(day: number, model: string, area: DangerArea, values: FwiDay): StageValue[] {
  const indices = [values.fwi, values.ffmc, values.dmc, values.dc, values.isi, values.bui, values.dsr];
  return [day * MS_PER_DAY, model, area.level, area.code, area.name, ...indices.map((value) => Math.round(value * 100) / 100)];
}

/** Noon weather for every danger area, in DANGER_AREAS order, as this model sees it. */
function modelWeather(seed: number, modelIndex: number, day: number): FwiWeather[] {
  const adminWeather = ADMIN_AREAS.map((area, index) => {
    const { lat, lon } = boxCentre(area.box);
    const regionKey = COUNTRIES.findIndex((country) => country.iso2 === area.iso2);
    const truth = noonWeather(dailyWeather(seed, { lat, lon, elevationM: 300, placeKey: 1000 + index, regionKey }, day));
    return perturb(seed, modelIndex, index, day, truth);
  });
  // A country's value is computed from its areas' mean weather, as a national run would on a coarse grid.
  const countryWeather = countriesWithAreas.map((country) => {
    const members = adminWeather.filter((_, index) => ADMIN_AREAS[index]?.iso2 === country.iso2);
    const mean = (pick: (weather: FwiWeather) => number): number => members.reduce((sum, weather) => sum + pick(weather), 0) / members.length;
    return { tempC: mean((w) => w.tempC), rhPct: mean((w) => w.rhPct), windKmh: mean((w) => w.windKmh), rainMm: mean((w) => w.rainMm) };
  });
  return [...countryWeather, ...adminWeather];
}

/** Model 0 (reanalysis) sees the truth; model 1 (forecast) sees it with forecast errors. */
function perturb(seed: number, modelIndex: number, areaIndex: number, day: number, truth: FwiWeather): FwiWeather {
  if (modelIndex === 0) return truth;
  const rng = rngFor(seed, 501, modelIndex, areaIndex, day);
  return {
    tempC: truth.tempC + 0.8 * rng.normal(),
    rhPct: clamp(truth.rhPct + 4 * rng.normal(), 5, 100),
    windKmh: truth.windKmh * Math.exp(0.12 * rng.normal()),
    rainMm: truth.rainMm > 0 ? truth.rainMm * rng.logNormal(0, 0.35) : 0,
  };
}
