// Hotspots: each burning event is seen by each satellite pass of the UTC day. JS decides
// per (event, pass) when the pass happened and how many pixels fired; SQL expands that
// into pixels. All pixels of a pass share the granule's acquisition time, as in FIRMS,
// so many rows share one acquiredAtUtc (nearby events even share a granule).

import { MS_PER_DAY, formatDay, windowDays } from './calendar.ts';
import { dayWeights, type FireEvent } from './fire-events.ts';
import type { DemoDatasetPlan, DemoPartition, StageColumn, StageValue } from './plan.ts';
import { rngFor, roundStochastic } from './random.ts';
import type { EventSource } from './event-source.ts';

interface SatellitePass {
  product: string;
  instrument: 'MODIS' | 'VIIRS';
  satellite: string;
  version: string;
  /** Local solar time of the equator crossing, hours. */
  localHour: number;
  daynight: 'D' | 'N';
  granuleMinutes: number;
  /** Relative share of an event's pixels: VIIRS 375 m pixels see far more than MODIS 1 km. */
  weight: number;
}

const PASSES: readonly SatellitePass[] = [
  { product: 'VIIRS_SNPP_NRT', instrument: 'VIIRS', satellite: 'N', version: '2.0NRT', localHour: 13.5, daynight: 'D', granuleMinutes: 6, weight: 1 },
  { product: 'VIIRS_SNPP_NRT', instrument: 'VIIRS', satellite: 'N', version: '2.0NRT', localHour: 1.5, daynight: 'N', granuleMinutes: 6, weight: 0.45 },
  { product: 'VIIRS_NOAA20_NRT', instrument: 'VIIRS', satellite: '1', version: '2.0NRT', localHour: 12.7, daynight: 'D', granuleMinutes: 6, weight: 1 },
  { product: 'VIIRS_NOAA20_NRT', instrument: 'VIIRS', satellite: '1', version: '2.0NRT', localHour: 0.7, daynight: 'N', granuleMinutes: 6, weight: 0.45 },
  { product: 'MODIS_NRT', instrument: 'MODIS', satellite: 'T', version: '6.1NRT', localHour: 10.5, daynight: 'D', granuleMinutes: 5, weight: 0.28 },
  { product: 'MODIS_NRT', instrument: 'MODIS', satellite: 'T', version: '6.1NRT', localHour: 22.5, daynight: 'N', granuleMinutes: 5, weight: 0.1 },
  { product: 'MODIS_NRT', instrument: 'MODIS', satellite: 'A', version: '6.1NRT', localHour: 13.5, daynight: 'D', granuleMinutes: 5, weight: 0.3 },
  { product: 'MODIS_NRT', instrument: 'MODIS', satellite: 'A', version: '6.1NRT', localHour: 1.5, daynight: 'N', granuleMinutes: 5, weight: 0.12 },
];

const TOTAL_WEIGHT = PASSES.reduce((sum, pass) => sum + pass.weight, 0);

export const HOTSPOT_STAGE: readonly StageColumn[] = [
  { name: 'rs', type: 'BIGINT' }, { name: 'product', type: 'VARCHAR' }, { name: 'instrument', type: 'VARCHAR' },
  { name: 'satellite', type: 'VARCHAR' }, { name: 'version', type: 'VARCHAR' }, { name: 'daynight', type: 'VARCHAR' },
  { name: 't', type: 'TIMESTAMPTZ' }, { name: 'acq_date', type: 'VARCHAR' }, { name: 'acq_time', type: 'VARCHAR' },
  { name: 'id_prefix', type: 'VARCHAR' }, { name: 'country', type: 'VARCHAR' }, { name: 'lat', type: 'DOUBLE' },
  { name: 'lon', type: 'DOUBLE' }, { name: 'radius_km', type: 'DOUBLE' }, { name: 'n', type: 'INTEGER' },
  { name: 'first_no', type: 'INTEGER' }, { name: 'scan_s', type: 'DOUBLE' }, { name: 'frp_mw', type: 'DOUBLE' },
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
  FROM demo_stage s, range(s.n) r(k)
), measured AS (
  SELECT *,
    least(500, greatest(300, CASE WHEN night THEN 295 ELSE 305 END + 12 * ln(frp_raw) + 6 * z1)) AS bt21,
    least(367, greatest(290, CASE WHEN night THEN 298 ELSE 325 END + 9 * ln(frp_raw) + 8 * z1)) AS bt_i4
  FROM pixel
)
SELECT
  id_prefix || CASE WHEN first_no + k < 999999 THEN lpad((first_no + k + 1)::VARCHAR, 6, '0') ELSE (first_no + k + 1)::VARCHAR END AS id,
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
    const dayShare = (event.detections * (dayWeights(event.durationDays)[dayIndex] ?? 0)) / TOTAL_WEIGHT;
    const radiusKm = event.radiusKm * Math.sqrt((dayIndex + 1) / event.durationDays);
    for (const pass of PASSES) {
      const timeMs = passTimeMs(pass, day, event.lon);
      // On the first day, passes before ignition see nothing: late fires that die the same
      // day are often never detected, as in reality (HOTSPOTS_PER_DAY is calibrated for it).
      const seen = dayIndex > 0 || timeMs >= event.ignitionMs;
      const pixels = seen ? roundStochastic(dayShare * pass.weight, rng) : 0;
      const rowSeed = rng.seed32();
      const scanPosition = rng.next();
      if (pixels === 0) continue;
      const first = counters.get(pass.product) ?? 0;
      counters.set(pass.product, first + pixels);
      const minutes = (timeMs - day * MS_PER_DAY) / 60_000;
      const acqTime = `${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`;
      const frp = event.frpMedianMw * (pass.instrument === 'MODIS' ? 3 : 1) * (pass.daynight === 'N' ? 0.6 : 1);
      rows.push([
        rowSeed, pass.product, pass.instrument, pass.satellite, pass.version, pass.daynight, timeMs, acqDate, acqTime,
        `${pass.product}_${acqDate.replaceAll('-', '')}_`, event.area?.iso2 ?? null, event.lat, event.lon, radiusKm,
        pixels, first, scanPosition, frp,
      ]);
    }
  }
  return rows;
}

/** Start of the granule that covers `lon` on this pass; the orbit drifts over a 16-day cycle. */
function passTimeMs(pass: SatellitePass, day: number, lon: number): number {
  const cycle = (day * 7 + pass.satellite.charCodeAt(0)) % 16;
  const driftMinutes = ((cycle - 7.5) / 7.5) * 45;
  const minutes = (((pass.localHour - lon / 15) * 60 + driftMinutes) % 1440 + 1440) % 1440;
  return day * MS_PER_DAY + Math.floor(minutes / pass.granuleMinutes) * pass.granuleMinutes * 60_000;
}
