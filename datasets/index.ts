import { burntAreas } from './burnt-areas.ts';
import type { DatasetDescriptor } from './descriptor.ts';
import { fireDanger } from './fire-danger.ts';
import { hotspots } from './hotspots.ts';
import { sensorReadings } from './sensor-readings.ts';
import { sensorStations } from './sensor-stations.ts';

export * from './descriptor.ts';

export const DATASETS: readonly DatasetDescriptor[] = [hotspots, burntAreas, fireDanger, sensorStations, sensorReadings];

export const STATIONS_DATASET = sensorStations;
