// The satellite passes that see European fires each UTC day: Terra and Aqua (MODIS),
// Suomi NPP and NOAA-20 (VIIRS), each once by day and once by night.

import { MS_PER_DAY } from './calendar.ts';

export interface SatellitePass {
  product: string;
  instrument: 'MODIS' | 'VIIRS';
  satellite: string;
  version: string;
  /** Local solar time of the overpass, hours. */
  localHour: number;
  daynight: 'D' | 'N';
  /** FIRMS stamps every pixel of a granule with the granule's start time. */
  granuleMinutes: number;
  /** Relative share of an event's pixels: VIIRS 375 m pixels see far more than MODIS 1 km. */
  weight: number;
}

const VIIRS_SNPP = { product: 'VIIRS_SNPP_NRT', instrument: 'VIIRS', satellite: 'N', version: '2.0NRT', granuleMinutes: 6 } as const;
const VIIRS_NOAA20 = { product: 'VIIRS_NOAA20_NRT', instrument: 'VIIRS', satellite: '1', version: '2.0NRT', granuleMinutes: 6 } as const;
const MODIS_TERRA = { product: 'MODIS_NRT', instrument: 'MODIS', satellite: 'T', version: '6.1NRT', granuleMinutes: 5 } as const;
const MODIS_AQUA = { product: 'MODIS_NRT', instrument: 'MODIS', satellite: 'A', version: '6.1NRT', granuleMinutes: 5 } as const;

export const PASSES: readonly SatellitePass[] = [
  { ...VIIRS_SNPP, localHour: 13.5, daynight: 'D', weight: 1 },
  { ...VIIRS_SNPP, localHour: 1.5, daynight: 'N', weight: 0.45 },
  // NOAA-20 flies half an orbit (~50 min) ahead of Suomi NPP.
  { ...VIIRS_NOAA20, localHour: 12.7, daynight: 'D', weight: 1 },
  { ...VIIRS_NOAA20, localHour: 0.7, daynight: 'N', weight: 0.45 },
  { ...MODIS_TERRA, localHour: 10.5, daynight: 'D', weight: 0.28 },
  { ...MODIS_TERRA, localHour: 22.5, daynight: 'N', weight: 0.1 },
  { ...MODIS_AQUA, localHour: 13.5, daynight: 'D', weight: 0.3 },
  { ...MODIS_AQUA, localHour: 1.5, daynight: 'N', weight: 0.12 },
];

export const TOTAL_PASS_WEIGHT = PASSES.reduce((sum, pass) => sum + pass.weight, 0);

/** The passes as a SQL VALUES list, joined on `pass_no` (the index in PASSES). */
export const PASSES_SQL = `(VALUES ${PASSES.map(
  (pass, index) => `(${index}, '${pass.product}', '${pass.instrument}', '${pass.satellite}', '${pass.version}', '${pass.daynight}')`,
).join(', ')}) AS passes(pass_no, product, instrument, satellite, version, daynight)`;

/** Start of the granule that covers `lon` on this pass; the orbit drifts over a 16-day cycle. */
export function passTimeMs(pass: SatellitePass, day: number, lon: number): number {
  const cycle = (day * 7 + pass.satellite.charCodeAt(0)) % 16;
  const driftMinutes = ((cycle - 7.5) / 7.5) * 45;
  const minutes = ((((pass.localHour - lon / 15) * 60 + driftMinutes) % 1440) + 1440) % 1440;
  return day * MS_PER_DAY + Math.floor(minutes / pass.granuleMinutes) * pass.granuleMinutes * 60_000;
}
