// Fire events: the hidden truth behind hotspots and burnt areas. Events that start on a day
// are a pure function of (seed, scale, day), so any partition can regenerate the events
// burning in it (those started up to MAX_EVENT_DAYS earlier) without the rest of the window.

import { MS_PER_DAY, dayOfYear } from './calendar.ts';
import { rngFor, pickWeighted, type Rng } from './random.ts';
import { ADMIN_AREAS, SEA_BOXES, type AdminArea, type Box } from './regions.ts';

/**
 * Mean hotspots per day at scale 1, averaged over a year: about 1,370 a day, so the bench's
 * 365 days x scale 10 gives ≈ 5.0 M hotspots. Summer days get ~3x (30 days to mid-August at
 * scale 1: ~130 k rows), late autumn ~0.3x (30 days to late November: ~12 k rows).
 */
export const HOTSPOTS_PER_DAY = 1370;
export const MAX_EVENT_DAYS = 10;

// Detections per event are heavy-tailed like real fire sizes: median ~7, mean ~20, and
// a rare event with thousands of pixels over a week.
const DETECTIONS_MU = 2.0;
const DETECTIONS_SIGMA = 1.4;
const MEAN_DETECTIONS = Math.exp(DETECTIONS_MU + (DETECTIONS_SIGMA * DETECTIONS_SIGMA) / 2);
/**
 * Share of those detections that a pass actually sees: passes before ignition on the first
 * day see nothing (hotspot-plan.ts). Measured over whole years for several seeds; the
 * calibration test keeps 365 days x scale 1 near 365 x HOTSPOTS_PER_DAY.
 */
const SEEN_SHARE = 0.727;
const OFFSHORE_SHARE = 0.015;
const KM_PER_DEG_LAT = 110.57;
const KM_PER_DEG_LON_AT_EQUATOR = 111.32;
/** Burnt-area rings reach ~2.5 radii from the centre (lobes, spot fires). */
const FOOTPRINT_RADII = 2.6;

export interface FireEvent {
  id: number;
  startDay: number;
  durationDays: number;
  /** Expected number of detections over the whole event (not rounded). */
  detections: number;
  areaHa: number;
  radiusKm: number;
  lat: number;
  lon: number;
  /** null: offshore (flare, ship), no country and no burnt area. */
  area: AdminArea | null;
  ignitionMs: number;
  frpMedianMw: number;
  seed: number;
}

const rawSeason = (doy: number): number =>
  0.15 + 2.2 * Math.exp(-0.5 * ((doy - 218) / 32) ** 2) + 0.35 * Math.exp(-0.5 * ((doy - 80) / 18) ** 2);
const SEASON_MEAN = Array.from({ length: 365 }, (_, index) => rawSeason(index + 1)).reduce((a, b) => a + b) / 365;

/** Relative fire activity on a day, with annual mean 1: a summer peak and a spring burning bump. */
export function seasonFactor(epochDay: number): number {
  return rawSeason(dayOfYear(epochDay)) / SEASON_MEAN;
}

export function eventsStartingOn(seed: number, scale: number, epochDay: number): FireEvent[] {
  const rng = rngFor(seed, 201, epochDay);
  // Day-to-day weather makes some days far busier than others (mean of the factor is 1).
  const dayFactor = rng.logNormal(-0.1, 0.45);
  const expected = (scale * HOTSPOTS_PER_DAY * seasonFactor(epochDay) * dayFactor) / (MEAN_DETECTIONS * SEEN_SHARE);
  const count = rng.poisson(expected);
  return Array.from({ length: count }, (_, index) => makeEvent(rngFor(seed, 202, epochDay, index), epochDay, index));
}

/** Share of an event's detections on each of its days: grows, peaks early, dies down. */
export function dayWeights(durationDays: number): number[] {
  const raw = Array.from({ length: durationDays }, (_, day) => (day + 1) * Math.exp((-(day + 1) * 2.2) / durationDays));
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((weight) => weight / total);
}

function makeEvent(rng: Rng, epochDay: number, index: number): FireEvent {
  const offshore = rng.chance(OFFSHORE_SHARE);
  const detections = Math.min(4000, rng.logNormal(DETECTIONS_MU, DETECTIONS_SIGMA));
  const area = offshore ? null : pickWeighted(ADMIN_AREAS, (candidate) => candidate.fireWeight, rng);
  const box: Box = area ? area.box : rng.pick(SEA_BOXES);
  let areaHa = offshore ? 0 : Math.min(60_000, Math.max(1, detections * 5 * rng.logNormal(0, 0.6)));
  let radiusKm = Math.max(0.3, Math.sqrt(areaHa / 100 / Math.PI));
  const maxRadiusKm = (0.95 * halfSizeKm(box)) / FOOTPRINT_RADII;
  if (radiusKm > maxRadiusKm) {
    radiusKm = maxRadiusKm;
    areaHa = Math.min(areaHa, Math.PI * radiusKm * radiusKm * 100);
  }
  const { lat, lon } = placeInBox(box, FOOTPRINT_RADII * radiusKm, rng);
  // Most fires start in the afternoon, local solar time.
  const ignitionHourUtc = Math.min(23.9, Math.max(0, rng.between(10, 19) - lon / 15));
  return {
    id: epochDay * 100_000 + index,
    startDay: epochDay,
    durationDays: Math.min(MAX_EVENT_DAYS, 1 + Math.floor(Math.log1p(detections) * rng.between(0.3, 1.1))),
    detections: offshore ? Math.min(detections, 6) : detections,
    areaHa,
    radiusKm,
    lat,
    lon,
    area,
    ignitionMs: epochDay * MS_PER_DAY + Math.floor(ignitionHourUtc * 60) * 60_000,
    frpMedianMw: rng.logNormal(Math.log(4), 0.6),
    seed: rng.seed32(),
  };
}

function halfSizeKm(box: Box): number {
  const midLat = (box[1] + box[3]) / 2;
  const width = ((box[2] - box[0]) / 2) * KM_PER_DEG_LON_AT_EQUATOR * Math.cos((midLat * Math.PI) / 180);
  const height = ((box[3] - box[1]) / 2) * KM_PER_DEG_LAT;
  return Math.min(width, height);
}

/** A uniform point in the box shrunk by `marginKm` on every side. */
function placeInBox(box: Box, marginKm: number, rng: Rng): { lat: number; lon: number } {
  const marginLat = marginKm / KM_PER_DEG_LAT;
  const lat = rng.between(box[1] + marginLat, box[3] - marginLat);
  const marginLon = marginKm / (KM_PER_DEG_LON_AT_EQUATOR * Math.cos((lat * Math.PI) / 180));
  return { lat, lon: rng.between(box[0] + marginLon, box[2] - marginLon) };
}
