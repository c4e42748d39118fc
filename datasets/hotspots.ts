import { z } from 'zod';
import { col, type DatasetDescriptor } from './descriptor.ts';

export const hotspots: DatasetDescriptor = {
  name: 'hotspots',
  title: 'Active-fire detections',
  description: 'Satellite active-fire detections (FIRMS MODIS and VIIRS) with their raw source columns. Pixels, not counts of fires.',
  columns: [
    col('id', 'VARCHAR', false, 'Unique detection id, stable across re-ingests'),
    col('product', 'VARCHAR', false, 'Source product id, e.g. MODIS_NRT, VIIRS_SNPP_NRT'),
    col('acquiredAtUtc', 'TIMESTAMPTZ', false, 'Acquisition time (from acq_date + acq_time), UTC'),
    col('country', 'VARCHAR', true, 'ISO 3166-1 alpha-2 of the pixel centre; null offshore'),
    col('latitude', 'DOUBLE', false, 'Pixel centre latitude', 'degree'),
    col('longitude', 'DOUBLE', false, 'Pixel centre longitude', 'degree'),
    col('brightness', 'DOUBLE', true, 'MODIS channel 21/22 brightness temperature (null for VIIRS)', 'K'),
    col('bright_t31', 'DOUBLE', true, 'MODIS channel 31 brightness temperature (null for VIIRS)', 'K'),
    col('bright_ti4', 'DOUBLE', true, 'VIIRS I-4 brightness temperature (null for MODIS)', 'K'),
    col('bright_ti5', 'DOUBLE', true, 'VIIRS I-5 brightness temperature (null for MODIS)', 'K'),
    col('scan', 'DOUBLE', true, 'Actual pixel size along scan', 'km'),
    col('track', 'DOUBLE', true, 'Actual pixel size along track', 'km'),
    col('acq_date', 'VARCHAR', false, 'Acquisition date YYYY-MM-DD as delivered'),
    col('acq_time', 'VARCHAR', false, 'Acquisition time HHMM as delivered, leading zeros kept'),
    col('satellite', 'VARCHAR', true, 'Satellite as delivered (A, T, N, 1, ...)'),
    col('instrument', 'VARCHAR', false, 'MODIS or VIIRS'),
    col('confidence', 'VARCHAR', true, 'MODIS 0-100, VIIRS l/n/h, as delivered'),
    col('version', 'VARCHAR', true, 'Collection and processing version, e.g. 6.1NRT'),
    col('frp', 'DOUBLE', true, 'Fire radiative power', 'MW'),
    col('daynight', 'VARCHAR', true, 'D (day) or N (night)'),
    col('type', 'INTEGER', true, 'Archive type code 0-3, null in NRT'),
  ],
  time: { column: 'acquiredAtUtc', partition: 'date', defaultDays: 1 },
  orderBy: ['acquiredAtUtc', 'id'],
  geometry: { kind: 'point', latitude: 'latitude', longitude: 'longitude' },
  featureId: 'id',
  filters: [
    {
      param: 'country',
      column: 'country',
      schema: z
        .string()
        .regex(/^[A-Za-z]{2}$/, 'must be a two-letter ISO 3166-1 alpha-2 country code')
        .transform((s) => s.toUpperCase()),
      description: 'Two-letter ISO 3166-1 alpha-2 country code of the pixel centre (case-insensitive)',
      defaultValue: null,
      example: 'PT',
    },
  ],
  bbox: true,
  folderChoice: null,
  options: [],
};
