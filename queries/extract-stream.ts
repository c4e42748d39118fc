import { compileCopy, compileRows, type QuerySpec } from './compile.ts';
import { copyInto } from './copy-stream.ts';
import type { Extract, ExtractContext, ExtractRequest } from './extract.ts';
import { assertFilesUnchanged } from './file-identity.ts';
import type { DataFile } from './partitions.ts';
import type { Cut, FileGroup } from './plan.ts';
import type { Sources } from './preflight.ts';
import { writeFeatureRows } from './row-stream.ts';
import type { Reservation } from './temp-budget.ts';
import { streamWrittenAhead } from './write-ahead.ts';

export interface StreamPlan {
  spec: QuerySpec;
  sources: Sources;
  groups: FileGroup[];
  cut: Cut;
  /** This response's share of TEMP_DIR_MAX_MB, given back when the response ends. */
  reservation: Reservation;
  /** CSV and text-only GeoJSON are written by DuckDB's COPY; WKB geometry goes through JavaScript. */
  writesNatively: boolean;
}

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

/** Throws unless the files `paths` (and the station files) are still the ones checked. */
export function verifierOf(dataset: string, sources: Sources): (paths: readonly string[]) => Promise<void> {
  const byPath = new Map(listedFiles(sources).map((f) => [f.path, f]));
  const hashes = checkedHashes(sources);
  const stations = sources.stationFiles ?? [];
  return (paths) => assertFilesUnchanged(dataset, [...paths.map((p) => byPath.get(p)!), ...stations], hashes);
}

type Head = Omit<Extract, 'chunks' | 'dispose'>;

/** A response whose groups are written ahead of the client into temp files, each on a connection leased for that write. */
export function streamedExtract(ctx: ExtractContext, req: ExtractRequest, plan: StreamPlan, head: Head): Extract {
  const { spec, groups, cut } = plan;
  const rows = (g: FileGroup) => compileRows(spec, g.files, req.format, req.window?.from ?? null, cut.to, cut.limit, g.presorted ? 'stored' : 'sort');
  const verify = verifierOf(req.descriptor.name, plan.sources);
  let consumed = false;
  const chunks = async function* () {
    if (consumed) throw new Error('extract already consumed');
    consumed = true;
    try {
      yield* streamWrittenAhead({
        tempDir: ctx.tempDir,
        groups: groups.length,
        write: plan.writesNatively
          ? (i, c, target) => copyInto(c, compileCopy(rows(groups[i]!), req.format, target, ctx.tempDir))
          : (i, c, target, signal) => writeFeatureRows(c, rows(groups[i]!), target, signal),
        waitLease: (signal) => ctx.engine.acquireBulk(ctx.owner ?? '', signal),
        tryLease: () => ctx.engine.tryAcquireBulk(ctx.owner ?? ''),
        // Rows encoded in JavaScript share one thread: a second group in flight would only add memory.
        maxInFlight: plan.writesNatively ? ctx.connectionsPerExtract : 1,
        aheadBytes: ctx.aheadBytes,
        expected: cut.returned,
        skipFirstBytes: req.format === 'geojson' ? 1 : 0,
        signal: ctx.signal,
        engineWork: ctx.engineWork ?? (() => () => undefined),
        verify: (i) => verify(groups[i]!.files),
      });
    } finally {
      plan.reservation.release();
    }
  };
  const dispose = () => {
    if (!consumed) plan.reservation.release();
  };
  return { ...head, chunks, dispose };
}
