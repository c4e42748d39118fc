import { COLUMNAR_ASSEMBLIES } from './columnar-stream.ts';
import { compileRows, type QuerySpec } from '../sql/compile.ts';
import { compileCopy } from '../sql/compile-copy.ts';
import { copyInto } from './copy-stream.ts';
import type { Extract, ExtractContext, ExtractRequest } from './extract.ts';
import { assertFilesUnchanged } from '../files/identity.ts';
import type { DataFile } from '../files/partitions.ts';
import type { Cut, FileGroup } from './plan.ts';
import type { Sources } from '../files/preflight.ts';
import { writeFeatureRows } from './row-stream.ts';
import type { Reservation } from '../engine/temp-budget.ts';
import { FORMATS } from '../formats.ts';
import { streamWrittenAhead } from './write-ahead.ts';

export interface StreamPlan {
  spec: QuerySpec;
  sources: Sources;
  groups: FileGroup[];
  cut: Cut;
  /** This response's share of TEMP_DIR_MAX_MB, given back when the response ends. */
  reservation: Reservation;
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
  const rules = FORMATS[req.format];
  const native = rules.native(req.descriptor);
  const rows = (i: number) => {
    const g = groups[i]!;
    return compileRows({ spec, files: g.files, select: rules.rows, from: req.window?.from ?? null, to: cut.to, limit: cut.limit, order: g.presorted ? 'stored' : 'sort' });
  };
  const verify = verifierOf(req.descriptor.name, plan.sources);
  const writeAhead = {
    tempDir: ctx.tempDir,
    waitLease: (signal: AbortSignal) => ctx.engine.acquireBulk(ctx.owner ?? '', signal),
    tryLease: () => ctx.engine.tryAcquireBulk(ctx.owner ?? ''),
    // Rows built in JavaScript share one thread: a second group in flight would only add memory.
    maxInFlight: native ? ctx.connectionsPerExtract : 1,
    aheadBytes: ctx.aheadBytes,
    expected: cut.returned,
    signal: ctx.signal,
    engineWork: ctx.engineWork ?? (() => () => undefined),
    // An empty Parquet response writes its schema from no files at all.
    verify: (i: number) => verify(groups[i]?.files ?? []),
  };
  const body = (keyValues: Readonly<Record<string, string>>): AsyncGenerator<Buffer> => {
    const body = rules.body;
    if (body.kind === 'columnar') {
      const columnar = { descriptor: req.descriptor, tempDir: ctx.tempDir, groups: groups.length, rows, writeAhead };
      return COLUMNAR_ASSEMBLIES[body.assembly](columnar, keyValues);
    }
    return streamWrittenAhead({
      ...writeAhead,
      groups: groups.length,
      write: native
        ? (i, c, target) => copyInto(c, compileCopy(rows(i), body.copy, target, ctx.tempDir))
        : (i, c, target, signal) => writeFeatureRows(c, rows(i), target, signal),
      skipFirstBytes: body.separator.length,
    });
  };
  let consumed = false;
  const chunks = async function* (keyValues: Readonly<Record<string, string>> = {}) {
    if (consumed) throw new Error('extract already consumed');
    consumed = true;
    try {
      yield* body(keyValues);
    } finally {
      plan.reservation.release();
    }
  };
  const dispose = () => {
    if (!consumed) plan.reservation.release();
  };
  return { ...head, chunks, dispose };
}
