// Synthetic daily weather shared by the sensor readings and the fire-danger series, so the
// two tell the same story (a hot dry spell raises both station temperatures and FWI).
// A day's weather is a pure function of (seed, place, day): climate + smooth "synoptic"
// waves shared by a region + noise. No state is carried, so any day can be made alone.

import { dayOfYear } from './calendar.ts';
import type { FwiWeather } from './fwi.ts';
import { rngFor } from './random.ts';

export interface WeatherPlace {
  lat: number;
  lon: number;
  elevationM: number;
  /** Stable number for this place's own noise. */
  placeKey: number;
  /** Places in one region share the synoptic situation (same heat wave, same rain front). */
  regionKey: number;
}

export interface DailyWeather {
  meanTempC: number;
  /** Half the day's max - min swing. */
  amplitudeC: number;
  meanRhPct: number;
  windMs: number;
  windDirDeg: number;
  rainMm: number;
  rainStartHourUtc: number;
  rainHours: number;
}

/** 1 in late July, 0 in late January. */
export function summerFactor(epochDay: number): number {
  return 0.5 + 0.5 * Math.cos((2 * Math.PI * (dayOfYear(epochDay) - 205)) / 365.25);
}

interface Synoptic {
  tempAnomalyC: number;
  humidityAnomaly: number;
  windMs: number;
  windDirDeg: number;
  /** Uniform draw shared by the region; a place rains when it falls under its own threshold. */
  rainDraw: number;
}

function synopticOn(seed: number, regionKey: number, epochDay: number): Synoptic {
  const phases = rngFor(seed, 101, regionKey);
  const phaseA = phases.next() * 2 * Math.PI;
  const phaseB = phases.next() * 2 * Math.PI;
  const prevailingDirDeg = phases.between(250, 360);
  const today = rngFor(seed, 102, regionKey, epochDay);
  const waves = 2.5 * Math.sin((2 * Math.PI * epochDay) / 9.1 + phaseA) + 1.8 * Math.sin((2 * Math.PI * epochDay) / 23.7 + phaseB);
  const summer = summerFactor(epochDay);
  return {
    tempAnomalyC: waves + 1.2 * today.normal(),
    humidityAnomaly: 5 * today.normal(),
    windMs: 2.2 + 1.6 * Math.abs(today.normal()),
    windDirDeg: prevailingDirDeg + 35 * today.normal(),
    rainDraw: today.next() + 0.02 * waves,
  };
}

export function dailyWeather(seed: number, place: WeatherPlace, epochDay: number): DailyWeather {
  const synoptic = synopticOn(seed, place.regionKey, epochDay);
  const local = rngFor(seed, 103, place.placeKey, epochDay);
  const summer = summerFactor(epochDay);
  const seasonal = (8.5 + 0.05 * Math.max(0, place.lon)) * Math.cos((2 * Math.PI * (dayOfYear(epochDay) - 200)) / 365.25);
  const climateC = 17 - 0.5 * (place.lat - 38) - (6.5 * place.elevationM) / 1000;
  // Mediterranean climate: rain is common in winter and rare in high summer, except up north.
  const rainChance = 0.05 + 0.3 * (1 - summer) + 0.025 * Math.max(0, place.lat - 44);
  const raining = synoptic.rainDraw < rainChance && local.chance(0.85);
  const rainMm = raining ? Math.min(80, local.logNormal(Math.log(3 + 4 * (1 - summer)), 0.9)) : 0;
  const meanTempC = climateC + seasonal + synoptic.tempAnomalyC + 0.7 * local.normal() - (raining ? 2 : 0);
  const meanRhPct = 76 - 24 * summer + 1.2 * Math.max(0, place.lat - 44) - 1.5 * synoptic.tempAnomalyC
    + synoptic.humidityAnomaly + 3 * local.normal() + (raining ? 12 : 0);
  return {
    meanTempC,
    amplitudeC: (4 + 5 * summer + local.next()) * (raining ? 0.5 : 1),
    meanRhPct: clamp(meanRhPct, 18, 97),
    windMs: synoptic.windMs * (0.8 + 0.4 * local.next()) + place.elevationM / 1000,
    windDirDeg: (((synoptic.windDirDeg + 15 * local.normal()) % 360) + 360) % 360,
    rainMm,
    rainStartHourUtc: local.between(0, 22),
    rainHours: raining ? local.between(1, 8) : 0,
  };
}

/** The standard FWI inputs: noon temperature and humidity, 10 m wind in km/h, 24 h rain. */
export function noonWeather(daily: DailyWeather): FwiWeather {
  const noonSwing = 0.7 * daily.amplitudeC;
  return {
    tempC: daily.meanTempC + noonSwing,
    rhPct: clamp(daily.meanRhPct - 2.2 * noonSwing, 8, 100),
    windKmh: daily.windMs * 3.6 * 1.15,
    rainMm: daily.rainMm,
  };
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
