// Sensor readings every 10 minutes: JS gives each station-day its weather (from the same
// weather model as fire danger) and SQL draws the 144 readings: a diurnal cycle peaking mid
// afternoon local solar time, humidity moving against temperature, gusts above the mean wind,
// tipping-bucket rain, a fuel-moisture stick that follows humidity and rain, and dropouts.

import { MS_PER_DAY, formatDay, windowDays } from '../calendar.ts';
import type { DemoDatasetPlan, DemoPartition, StageColumn, StageValue } from './plan.ts';
import { rngFor } from '../random.ts';
import type { DemoStation } from './station-plan.ts';
import { dailyWeather } from '../weather.ts';

const STAGE: readonly StageColumn[] = [
  { name: 'rs', type: 'BIGINT' }, { name: 'stationId', type: 'VARCHAR' }, { name: 'simulated', type: 'BOOLEAN' },
  { name: 'lon', type: 'DOUBLE' }, { name: 'day_start_us', type: 'BIGINT' },
  { name: 't_a', type: 'DOUBLE' }, { name: 't_b', type: 'DOUBLE' }, { name: 'amp', type: 'DOUBLE' },
  { name: 'rh_a', type: 'DOUBLE' }, { name: 'rh_b', type: 'DOUBLE' }, { name: 'w_a', type: 'DOUBLE' },
  { name: 'w_b', type: 'DOUBLE' }, { name: 'dir_base', type: 'DOUBLE' }, { name: 'rain_start', type: 'INTEGER' },
  { name: 'rain_slots', type: 'INTEGER' }, { name: 'rain_rate', type: 'DOUBLE' }, { name: 'fuel_base', type: 'DOUBLE' },
  { name: 'drop_start', type: 'INTEGER' }, { name: 'drop_slots', type: 'INTEGER' },
];

// `*_a`/`*_b` are today's and tomorrow's daily means, blended through the day so series do
// not jump at midnight UTC. A dropout blanks the whole row's values (logger offline); a
// single sensor also fails now and then (0.2 %). Timestamps are built from epoch
// microseconds: TIMESTAMPTZ + INTERVAL goes through ICU calendars per row, which costs
// more than everything else in the row.
const SELECT_SQL = `
WITH slot AS (
  SELECT s.*, r.k, r.k / 144.0 AS f,
    cos(2 * pi() * ((r.k / 6.0 + s.lon / 15 - 15) / 24)) AS diurnal,
    r.k >= s.rain_start AND r.k < s.rain_start + s.rain_slots AS raining,
    r.k >= s.drop_start AND r.k < s.drop_start + s.drop_slots AS down,
    CASE WHEN s.rain_slots > 0 AND r.k >= s.rain_start
      THEN 10 * exp(-greatest(0, r.k - s.rain_start - s.rain_slots) / 48.0) ELSE 0 END AS wetting
  FROM demo_stage s, range(144) r(k)
), physical AS (
  SELECT *,
    t_a + (t_b - t_a) * f + amp * diurnal + 0.25 * demo_z(rs, k, 1) AS temp,
    least(100, greatest(3, rh_a + (rh_b - rh_a) * f - 2.2 * amp * diurnal + 1.5 * demo_z(rs, k, 2)
      + CASE WHEN raining THEN 15 ELSE 0 END)) AS rh,
    greatest(0, (w_a + (w_b - w_a) * f) * (1 + 0.35 * diurnal) * (1 + 0.25 * demo_z(rs, k, 3))) AS wind
  FROM slot
)
SELECT
  "stationId",
  make_timestamptz(day_start_us + k * 600000000) AS "measuredAtUtc",
  simulated,
  CASE WHEN NOT down AND demo_u(rs, k, 11) >= 0.002 THEN round(temp, 1) END AS "airTemperatureC",
  CASE WHEN NOT down AND demo_u(rs, k, 12) >= 0.002 THEN round(rh, 1) END AS "relativeHumidityPct",
  CASE WHEN NOT down AND demo_u(rs, k, 13) >= 0.002 THEN round(wind, 1) END AS "windSpeedMs",
  CASE WHEN NOT down AND demo_u(rs, k, 13) >= 0.002 THEN round(wind * (1.25 + 0.4 * demo_u(rs, k, 4)) + 0.3, 1) END AS "windGustMs",
  CASE WHEN NOT down AND demo_u(rs, k, 13) >= 0.002 THEN round(((dir_base + 25 * demo_z(rs, k, 5)) % 360 + 360) % 360) END AS "windDirectionDeg",
  CASE WHEN NOT down AND demo_u(rs, k, 14) >= 0.002
    THEN CASE WHEN raining THEN round(round(greatest(0.2, rain_rate * (0.3 + 1.4 * demo_u(rs, k, 6))) * 5) / 5, 1) ELSE 0 END
  END AS "precipitationMm",
  CASE WHEN NOT down AND demo_u(rs, k, 15) >= 0.002
    THEN round(least(40, greatest(2, fuel_base + 0.12 * (rh - 50) - 0.08 * (temp - 20) + wetting)), 1)
  END AS "fuelMoisturePct"
FROM physical
ORDER BY "measuredAtUtc", "stationId"`;

export function readingPlan(seed: number, endDay: number, days: number, stations: readonly DemoStation[]): DemoDatasetPlan {
  return {
    dataset: 'sensor-readings',
    stage: STAGE,
    selectSql: SELECT_SQL,
    partitions: function* (): Generator<DemoPartition> {
      for (const day of windowDays(endDay, days)) {
        yield { dirs: [`date=${formatDay(day)}`], rows: stations.map((station) => stationDayRow(seed, station, day)) };
      }
    },
  };
}

function stationDayRow(seed: number, station: DemoStation, day: number): StageValue[] {
  const place = { lat: station.lat, lon: station.lon, elevationM: station.elevationM, placeKey: station.placeKey, regionKey: station.regionKey };
  const today = dailyWeather(seed, place, day);
  const tomorrow = dailyWeather(seed, place, day + 1);
  const rng = rngFor(seed, 701, station.placeKey, day);
  const rainSlots = today.rainMm > 0 ? Math.max(1, Math.round(today.rainHours * 6)) : 0;
  const dropout = rng.chance(0.03);
  return [
    rng.seed32(), station.stationId, station.simulated, station.lon, day * MS_PER_DAY * 1000,
    today.meanTempC, tomorrow.meanTempC, today.amplitudeC, today.meanRhPct, tomorrow.meanRhPct,
    today.windMs, tomorrow.windMs, today.windDirDeg,
    Math.floor(today.rainStartHourUtc * 6), rainSlots, rainSlots > 0 ? today.rainMm / rainSlots : 0,
    rng.between(7, 11), dropout ? rng.int(144) : 0, dropout ? 1 + rng.int(36) : 0,
  ];
}
