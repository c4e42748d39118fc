// Hotspots: each burning event is seen by each satellite pass of the UTC day. JS decides
// per (event, pass) when the pass happened and how many pixels fired; SQL expands that
// into pixels. All pixels of a pass share the granule's acquisition time, as in FIRMS,
// so many rows share one acquiredAtUtc (nearby events even share a granule).

import { MS_PER_DAY, formatDay, windowDays } from '../calendar.ts';
import { dayWeights, type FireEvent } from '../fire-events.ts';
import type { DemoDatasetPlan, DemoPartition, StageColumn, StageValue } from './plan.ts';
import { rngFor, roundStochastic } from '../random.ts';
import type { EventSource } from '../event-source.ts';
import { PASSES, PASSES_SQL, TOTAL_PASS_WEIGHT, passTimeMs } from '../satellite-passes.ts';

// Narrow on purpose: at bench scale this table takes millions of rows through the appender,
// so pass attributes come from PASSES_SQL by number instead of as strings.
export const HOTSPOT_STAGE: readonly StageColumn[] = [
  { name: 'rs', type: 'BIGINT' }, { name: 'pass_no', type: 'INTEGER' }, { name: 't', type: 'TIMESTAMPTZ' },
  { name: 'acq_date', type: 'VARCHAR' }, { name: 'acq_time', type: 'VARCHAR' }, { name: 'country', type: 'VARCHAR' },
  { name: 'lat', type: 'DOUBLE' }, { name: 'lon', type: 'DOUBLE' }, { name: 'radius_km', type: 'DOUBLE' },
  { name: 'n', type: 'INTEGER' }, { name: 'first_no', type: 'INTEGER' }, { name: 'scan_s', type: 'DOUBLE' },
  { name: 'frp_mw', type: 'DOUBLE' },
];

// Pixel sizes follow the scan angle (1-4.8 km MODIS, 0.32-0.8 km VIIRS); brightness
// temperatures follow FRP; VIIRS I4 saturates at 367 K; `type` is only in archive products.
const SELECT_SQL = `
WITH pixel AS (
  SELECT s.*, r.k,
    s.instrument = 'MODIS' AS modis, s.daynight = 'N' AS night,
    s.radius_km * sqrt(demo_u(s.rs, r.k, 1)) AS r_km, 2 * pi() * demo_u(s.rs, r.k, 2) AS theta,
    greatest(0.1, s.frp_mw * exp(0.8 * demo_z(s.rs, r.k, 3))) AS frp_raw,
    demo_z(s.rs, r.k, 4) AS z1, demo_z(s.rs, r.k, 5) AS z2, demo_z(s.rs, r.k, 6) AS z3,
    pow(least(1, greatest(0, s.scan_s + 0.04 * (demo_u(s.rs, r.k, 7) - 0.5))), 2) AS s2,
    demo_u(s.rs, r.k, 8) AS u8
  FROM (SELECT * FROM demo_stage JOIN ${PASSES_SQL} USING (pass_no)) s, range(s.n) r(k)
), measured AS (
  SELECT *,
    least(500, greatest(300, CASE WHEN night THEN 295 ELSE 305 END + 12 * ln(frp_raw) + 6 * z1)) AS bt21,
    least(367, greatest(290, CASE WHEN night THEN 298 ELSE 325 END + 9 * ln(frp_raw) + 8 * z1)) AS bt_i4
  FROM pixel
)
SELECT
  -- product_YYYYMMDD_counter; lpad would cut a 7th digit, so the rare big counter goes unpadded.
  product || '_' || replace(acq_date, '-', '') || '_'
    || CASE WHEN first_no + k < 999999 THEN lpad((first_no + k + 1)::VARCHAR, 6, '0') ELSE (first_no + k + 1)::VARCHAR END AS id,
  product,
  t AS "acquiredAtUtc",
  country,
  round(lat + r_km * cos(theta) / 110.57, CASE WHEN modis THEN 4 ELSE 5 END) AS latitude,
  round(lon + r_km * sin(theta) / (111.32 * cos(radians(lat))), CASE WHEN modis THEN 4 ELSE 5 END) AS longitude,
  CASE WHEN modis THEN round(bt21, 2) END AS brightness,
  CASE WHEN modis THEN round(CASE WHEN night THEN 279 ELSE 292 END + 2 * ln(frp_raw) + 2.5 * z2, 2) END AS bright_t31,
  CASE WHEN NOT modis THEN round(bt_i4, 2) END AS bright_ti4,
  CASE WHEN NOT modis THEN round(CASE WHEN night THEN 276 ELSE 294 END + 2.5 * ln(frp_raw) + 3 * z2, 2) END AS bright_ti5,
  CASE WHEN modis THEN round(1 + 3.8 * s2, 1) ELSE round(0.32 + 0.48 * s2, 2) END AS scan,
  CASE WHEN modis THEN round(1 + s2, 1) ELSE round(0.36 + 0.42 * s2, 2) END AS track,
  acq_date,
  acq_time,
  satellite,
  instrument,
  CASE
    WHEN modis THEN least(100, greatest(0, round(55 + 1.5 * (bt21 - 320) + 12 * z3)))::INTEGER::VARCHAR
    WHEN bt_i4 >= 360 OR frp_raw >= 15 THEN 'h'
    WHEN u8 < 0.06 THEN 'l'
    ELSE 'n'
  END AS confidence,
  version,
  round(frp_raw, 2) AS frp,
  daynight,
  NULL::INTEGER AS "type"
FROM measured
ORDER BY "acquiredAtUtc", id`;

export function hotspotPlan(seed: number, endDay: number, days: number, events: EventSource): DemoDatasetPlan {
  return {
    dataset: 'hotspots',
    stage: HOTSPOT_STAGE,
    selectSql: SELECT_SQL,
    partitions: function* (): Generator<DemoPartition> {
      for (const day of windowDays(endDay, days)) {
        yield { dirs: [`date=${formatDay(day)}`], rows: passRows(seed, day, events.activeOn(day)) };
      }
    },
  };
}

/** One stage row per (event, pass) that saw at least one pixel on `day`. */
export function passRows(seed: number, day: number, active: readonly FireEvent[]): StageValue[][] {
  const rows: StageValue[][] = [];
  const counters = new Map<string, number>();
  const acqDate = formatDay(day);
  for (const event of active) {
    const rng = rngFor(seed, 301, event.seed, day);
    const dayIndex = day - event.startDay;
    const dayShare = (event.detections * (dayWeights(event.durationDays)[dayIndex] ?? 0)) / TOTAL_PASS_WEIGHT;
    const radiusKm = event.radiusKm * Math.sqrt((dayIndex + 1) / event.durationDays);
    PASSES.forEach((pass, passNo) => {
      const timeMs = passTimeMs(pass, day, event.lon);
      // On the first day, passes before ignition see nothing: late fires that die the same
      // day are often never detected, as in reality (HOTSPOTS_PER_DAY is calibrated for it).
      const seen = dayIndex > 0 || timeMs >= event.ignitionMs;
      const pixels = seen ? roundStochastic(dayShare * pass.weight, rng) : 0;
      const rowSeed = rng.seed32();
      const scanPosition = rng.next();
      if (pixels === 0) return;
      const first = counters.get(pass.product) ?? 0;
      counters.set(pass.product, first + pixels);
      const frp = event.frpMedianMw * (pass.instrument === 'MODIS' ? 3 : 1) * (pass.daynight === 'N' ? 0.6 : 1);
      rows.push([
        rowSeed, passNo, timeMs, acqDate, hhmm(timeMs - day * MS_PER_DAY), event.area?.iso2 ?? null,
        event.lat, event.lon, radiusKm, pixels, first, scanPosition, frp,
      ]);
    });
  }
  return rows;
}

function hhmm(msIntoDay: number): string {
  const minutes = Math.floor(msIntoDay / 60_000);
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`;
}
