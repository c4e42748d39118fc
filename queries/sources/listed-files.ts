import { assertFilesUnchanged } from '../files/identity.ts';
import type { DataFile } from '../files/data-file.ts';
import type { Sources } from './preflight.ts';

/** Every file the preflight listed and checked for this response, the station files included. */
export function listedFiles(sources: Sources): DataFile[] {
  return [...sources.partitions.flatMap((p) => p.files), ...(sources.stationFiles ?? [])];
}

/** Footer hashes of the listed files, station files included (the preflight keeps those in listing order), by path. */
function checkedHashes(sources: Sources): Map<string, string> {
  const hashes = new Map(sources.footerHashes);
  sources.stationFiles?.forEach((f, i) => hashes.set(f.path, sources.stationHashes[i] ?? ''));
  return hashes;
}

/** Throws unless the files `paths` (and the station files) are still the ones checked; `fromRenderings`: see assertFilesUnchanged. */
export function verifierOf(dataset: string, sources: Sources, fromRenderings = false): (paths: readonly string[]) => Promise<void> {
  const byPath = new Map(listedFiles(sources).map((f) => [f.path, f]));
  const hashes = checkedHashes(sources);
  const stations = sources.stationFiles ?? [];
  return (paths) => assertFilesUnchanged(dataset, [...paths.map((p) => byPath.get(p)!), ...stations], hashes, fromRenderings);
}
