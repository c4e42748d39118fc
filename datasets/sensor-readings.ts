import { col, type DatasetDescriptor } from './descriptor.ts';
import { stationFilters } from './station-filters.ts';

/** A measured quantity: stored raw; series=corrected serves the correction model's value. */
const raw = (name: string, what: string, unit: string) => col(name, 'DOUBLE', true, `${what} (raw; with series=corrected, as the correction model gives it)`, unit);

export const SERIES = ['raw', 'corrected'] as const;

const measured = [
  raw('airTemperatureC', 'Air temperature', 'degC'),
  raw('relativeHumidityPct', 'Relative humidity', 'percent'),
  raw('windSpeedMs', 'Wind speed', 'm/s'),
  raw('windGustMs', 'Wind gust', 'm/s'),
  raw('windDirectionDeg', 'Wind direction', 'degree'),
  raw('precipitationMm', 'Precipitation in the 10-minute interval', 'mm'),
  raw('fuelMoisturePct', 'Fuel moisture', 'percent'),
];

export const sensorReadings: DatasetDescriptor = {
  name: 'sensor-readings',
  title: 'Sensor readings',
  description:
    'Raw 10-minute readings of the ground sensor network. series=corrected returns the correction layer: the values of the latest published correction model (or the one correctionModel pins), its id in every row; raw values and correctionModel null while no model is published.',
  columns: [
    col('stationId', 'VARCHAR', false, 'Station id'),
    col('measuredAtUtc', 'TIMESTAMPTZ', false, 'Measurement time, UTC'),
    col('simulated', 'BOOLEAN', false, 'True for readings of simulated demo stations'),
    { ...col('series', 'VARCHAR', false, 'Series served: raw or corrected'), computed: { kind: 'param', param: 'series' } },
    { ...col('correctionModel', 'VARCHAR', true, 'Correction model id; null when no correction is applied'), computed: { kind: 'correctionModel' } },
    ...measured,
  ],
  time: { column: 'measuredAtUtc', partition: 'date', defaultDays: 1 },
  orderBy: ['measuredAtUtc', 'stationId'],
  geometry: { kind: 'station', stationId: 'stationId' },
  featureId: null,
  filters: stationFilters('readings'),
  bbox: false,
  folderChoice: null,
  options: [{ param: 'series', allowed: SERIES, defaultValue: 'raw', description: 'raw: untouched values; corrected: the correction layer' }],
  aggregate: {
    keys: [{ kind: 'station', name: 'stationId', column: 'stationId' }],
    measures: ['airTemperatureC', 'relativeHumidityPct', 'windSpeedMs', 'windGustMs', 'windDirectionDeg', 'precipitationMm', 'fuelMoisturePct'],
  },
  correction: { series: { param: 'series', value: 'corrected' }, param: 'correctionModel', stationColumn: 'stationId', quantities: measured.map((c) => c.name) },
};
