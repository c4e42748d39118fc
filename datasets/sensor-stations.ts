import { col, type DatasetDescriptor } from './descriptor.ts';
import { stationFilters } from './station-filters.ts';

export const sensorStations: DatasetDescriptor = {
  name: 'sensor-stations',
  title: 'Sensor stations',
  description: 'Registry of the ground sensor network, simulated demo stations included (filter on simulated first).',
  columns: [
    col('stationId', 'VARCHAR', false, 'Station id'),
    col('name', 'VARCHAR', true, 'Station name'),
    col('latitude', 'DOUBLE', false, 'Latitude', 'degree'),
    col('longitude', 'DOUBLE', false, 'Longitude', 'degree'),
    col('elevationM', 'DOUBLE', true, 'Elevation above sea level', 'm'),
    col('simulated', 'BOOLEAN', false, 'True for simulated demo stations; excluded from every citable dataset'),
    col('installedAtUtc', 'TIMESTAMPTZ', true, 'Installation time, UTC'),
  ],
  time: null,
  orderBy: ['stationId'],
  geometry: { kind: 'point', latitude: 'latitude', longitude: 'longitude' },
  featureId: 'stationId',
  filters: stationFilters('stations'),
  bbox: false,
  folderChoice: null,
  options: [],
  aggregate: null,
};
