import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';

let land: Promise<string> | null = null;

/** Natural Earth's land at 1:110m (world-atlas, from npm) as GeoJSON text: the map's background, built once. */
export function worldOutline(): Promise<string> {
  land ??= (async () => {
    const file = createRequire(import.meta.url).resolve('world-atlas/land-110m.json');
    const topology = JSON.parse(await readFile(file, 'utf8')) as Topology;
    return JSON.stringify(feature(topology, topology.objects.land!));
  })();
  return land;
}
