import { z } from 'zod';
import { codeFilter, col, columnKeys, type DatasetDescriptor } from './descriptor.ts';

const index = (name: string, what: string) => col(name, 'DOUBLE', true, what, 'dimensionless');

export const FIRE_DANGER_LEVELS = ['country', 'adminArea'] as const;

export const fireDanger: DatasetDescriptor = {
  name: 'fire-danger',
  title: 'Fire danger (FWI system)',
  description: 'Daily Fire Weather Index system series. Exactly one model and one reference level per response.',
  columns: [
    col('date', 'TIMESTAMPTZ', false, 'Day of the record, 00:00 UTC'),
    col('model', 'VARCHAR', false, 'Fire-danger model id'),
    col('level', 'VARCHAR', false, 'Reference level: country or adminArea (never mix them in one analysis)'),
    col('areaCode', 'VARCHAR', false, 'ISO 3166-1 alpha-2 (country) or NUTS code (adminArea)'),
    col('areaName', 'VARCHAR', true, 'Area name'),
    index('FWI', 'Fire Weather Index'),
    index('FFMC', 'Fine Fuel Moisture Code'),
    index('DMC', 'Duff Moisture Code'),
    index('DC', 'Drought Code'),
    index('ISI', 'Initial Spread Index'),
    index('BUI', 'Buildup Index'),
    index('DSR', 'Daily Severity Rating'),
  ],
  time: { column: 'date', partition: 'month', defaultDays: 30 },
  orderBy: ['date', 'areaCode'],
  geometry: { kind: 'none' },
  featureId: null,
  filters: [
    {
      param: 'level',
      column: 'level',
      schema: z.enum(FIRE_DANGER_LEVELS),
      description: 'Reference level; one level per response',
      defaultValue: 'country',
      allowed: FIRE_DANGER_LEVELS,
    },
    codeFilter(
      'areaCode',
      'areaCode',
      /^[A-Za-z]{2}[A-Za-z0-9]{0,3}$/,
      'must be an ISO 3166-1 alpha-2 or NUTS code (e.g. PT, PT11)',
      'Area code: ISO 3166-1 alpha-2 at level=country, NUTS code at level=adminArea (case-insensitive)',
      'PT11',
    ),
  ],
  bbox: false,
  folderChoice: {
    param: 'model',
    key: 'model',
    description: 'Fire-danger model; one model per response. Valid values are the models present in the data; default is the first in alphabetical order.',
  },
  options: [],
  // Within the one model and level of the request: areas of two levels are never summed together.
  aggregate: { keys: columnKeys('areaCode'), measures: ['FWI', 'FFMC', 'DMC', 'DC', 'ISI', 'BUI', 'DSR'] },
};
