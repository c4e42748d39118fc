// FIRMS active-fire CSV, exactly as FIRMS delivers it (NRT, archive and country downloads), to
// the hotspots schema. The source columns are kept as delivered; the service columns (id,
// product, acquiredAtUtc, country) are derived here.

import { createHash } from 'node:crypto';
import { iso1A2Code } from '@rapideditor/country-coder';
import { hotspots } from '../../datasets/hotspots.ts';
import { FileProblem, parseNumber, RowProblem, typedRow, type StageValue } from './values.ts';

const VIIRS = ['bright_ti4', 'bright_ti5'];
const MODIS = ['brightness', 'bright_t31'];
const ALWAYS = ['latitude', 'longitude', 'acq_date', 'acq_time'];

/** FIRMS satellite codes of VIIRS (short and long forms) to the platform in FIRMS product names. */
const VIIRS_PLATFORM: Record<string, string> = {
  N: 'SNPP', 'Suomi NPP': 'SNPP', NPP: 'SNPP',
  '1': 'NOAA20', N20: 'NOAA20', 'NOAA-20': 'NOAA20', J1: 'NOAA20',
  '2': 'NOAA21', N21: 'NOAA21', 'NOAA-21': 'NOAA21', J2: 'NOAA21',
};

/** Which FIRMS layout a header is: VIIRS or MODIS columns, plus the ones every layout has. */
export function firmsInstrument(header: readonly string[]): 'VIIRS' | 'MODIS' {
  const has = (names: string[]) => names.every((n) => header.includes(n));
  const missing = ALWAYS.filter((n) => !header.includes(n));
  if (missing.length > 0) throw new FileProblem(`not a FIRMS CSV: column ${missing.join(', ')} missing`);
  if (has(VIIRS)) return 'VIIRS';
  if (has(MODIS)) return 'MODIS';
  throw new FileProblem('not a FIRMS CSV: neither VIIRS (bright_ti4, bright_ti5) nor MODIS (brightness, bright_t31) columns');
}

/** `MODIS_NRT`, `VIIRS_NOAA20_SP`, ...: FIRMS product names from satellite, instrument and version. */
export function firmsProduct(instrument: string, satellite: string, version: string): string {
  const processing = /NRT$/i.test(version) ? 'NRT' : 'SP';
  if (instrument === 'MODIS') return `MODIS_${processing}`;
  const platform = VIIRS_PLATFORM[satellite];
  if (!platform) throw new RowProblem(`product: unknown VIIRS satellite '${satellite}' (give --product)`);
  return `VIIRS_${platform}_${processing}`;
}

/** `HHMM` with the leading zeros FIRMS exports sometimes drop (`5` is 00:05, `130` is 01:30). */
export function firmsTime(text: string): string {
  if (!/^\d{1,4}$/.test(text)) throw new RowProblem(`acq_time: '${text}' is not HHMM`);
  const hhmm = text.padStart(4, '0');
  if (Number(hhmm.slice(0, 2)) > 23 || Number(hhmm.slice(2)) > 59) throw new RowProblem(`acq_time: '${text}' is not a time of day`);
  return hhmm;
}

/** ISO 3166-1 alpha-2 of the country containing the point; null at sea. */
export function countryAt(longitude: number, latitude: number): string | null {
  return iso1A2Code([longitude, latitude]) ?? null;
}

/**
 * Stable across re-ingests and re-downloads: a detection is its product, time and pixel centre
 * (numbers compared as numbers, so `39.50` and `39.5` are one pixel).
 */
export function hotspotId(product: string, acqDate: string, hhmm: string, latitude: number, longitude: number): string {
  const digest = createHash('sha256').update(`${product}|${acqDate}|${hhmm}|${latitude}|${longitude}`).digest('hex');
  return `${product}_${acqDate.replaceAll('-', '')}_${digest.slice(0, 20)}`;
}

/** A mapper from one FIRMS record (fields in header order) to the hotspots file columns. */
export function firmsMapper(header: readonly string[], product: string | undefined): (fields: readonly string[]) => StageValue[] {
  const layout = firmsInstrument(header);
  const index = new Map(header.map((name, i) => [name, i]));
  return (fields) => {
    if (fields.length !== header.length) throw new RowProblem(`${fields.length} fields, the header has ${header.length}`);
    const source = (name: string): string => (index.has(name) ? fields[index.get(name)!]!.trim() : '');
    const latitude = parseNumber(source('latitude'), 'latitude');
    const longitude = parseNumber(source('longitude'), 'longitude');
    if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) throw new RowProblem(`latitude/longitude ${latitude}, ${longitude} out of range`);
    const acqDate = source('acq_date');
    if (!/^\d{4}-\d{2}-\d{2}$/.test(acqDate)) throw new RowProblem(`acq_date: '${acqDate}' is not YYYY-MM-DD`);
    const hhmm = firmsTime(source('acq_time'));
    const instrument = source('instrument') || layout;
    const productId = product ?? firmsProduct(instrument, source('satellite'), source('version'));
    const derived: Record<string, string | null> = {
      id: hotspotId(productId, acqDate, hhmm, latitude, longitude),
      product: productId,
      acquiredAtUtc: `${acqDate}T${hhmm.slice(0, 2)}:${hhmm.slice(2)}:00Z`,
      country: countryAt(longitude, latitude),
      acq_time: hhmm,
      instrument,
    };
    return typedRow(hotspots, (name) => (name in derived ? derived[name] : source(name)));
  };
}
