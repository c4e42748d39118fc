import { codeFilter, col, columnKeys, type DatasetDescriptor } from './descriptor.ts';

const landCover = (name: string, what: string) => col(name, 'DOUBLE', true, `Share of ${what} in the burnt area`, 'percent');

export const burntAreas: DatasetDescriptor = {
  name: 'burnt-areas',
  title: 'Burnt-area perimeters',
  description: 'EFFIS burnt-area perimeters with all attributes. GeoJSON carries the geometry; CSV is the attribute table.',
  columns: [
    col('id', 'BIGINT', false, 'EFFIS perimeter id'),
    col('FIREDATE', 'TIMESTAMPTZ', false, 'Date the fire was first detected, UTC'),
    col('LASTUPDATE', 'TIMESTAMPTZ', false, 'Last update of the perimeter, UTC'),
    col('FINALDATE', 'TIMESTAMPTZ', true, 'Date the perimeter became final, UTC; null while active'),
    col('COUNTRY', 'VARCHAR', true, 'EFFIS country code as delivered (e.g. EL, UK)'),
    col('PROVINCE', 'VARCHAR', true, 'Province name'),
    col('COMMUNE', 'VARCHAR', true, 'Commune name'),
    col('AREA_HA', 'DOUBLE', true, 'Burnt area', 'ha'),
    landCover('BROADLEA', 'broadleaved forest'),
    landCover('CONIFER', 'coniferous forest'),
    landCover('MIXED', 'mixed forest'),
    landCover('SCLEROPH', 'sclerophyllous vegetation'),
    landCover('TRANSIT', 'transitional woodland-shrub'),
    landCover('OTHERNATLC', 'other natural land cover'),
    landCover('AGRIAREAS', 'agricultural areas'),
    landCover('ARTIFSURF', 'artificial surfaces'),
    landCover('OTHERLC', 'other land cover'),
    col('PERCNA2K', 'DOUBLE', true, 'Share of the burnt area inside Natura 2000 sites', 'percent'),
    col('CLASS', 'VARCHAR', true, 'EFFIS perimeter class as delivered'),
    col('geometry', 'GEOMETRY', false, 'Perimeter, Polygon or MultiPolygon, CRS84'),
  ],
  time: { column: 'FIREDATE', partition: 'month', defaultDays: 30 },
  orderBy: ['FIREDATE', 'id'],
  geometry: { kind: 'wkb', column: 'geometry' },
  featureId: 'id',
  filters: [
    codeFilter(
      'country',
      'COUNTRY',
      /^[A-Za-z]{2}$/,
      'must be a two-letter EFFIS country code (e.g. PT, EL, UK)',
      'Two-letter EFFIS country code as delivered in COUNTRY (e.g. PT, EL for Greece, UK), case-insensitive',
      'PT',
    ),
  ],
  bbox: true,
  folderChoice: null,
  options: [],
  aggregate: {
    keys: columnKeys('COUNTRY', 'PROVINCE', 'CLASS'),
    measures: ['AREA_HA', 'BROADLEA', 'CONIFER', 'MIXED', 'SCLEROPH', 'TRANSIT', 'OTHERNATLC', 'AGRIAREAS', 'ARTIFSURF', 'OTHERLC', 'PERCNA2K'],
  },
};
