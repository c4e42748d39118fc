import { COLUMNAR_ASSEMBLIES } from './columnar-stream.ts';
import { compileRows } from '../sql/compile.ts';
import { compileCopy } from '../sql/compile-copy.ts';
import { copyInto } from '../encode/copy-stream.ts';
import { readOnce, type Extract, type PreparedExtract } from '../sources/context.ts';
import type { ExtractContext } from '../renderings/rendered.ts';
import { assertFilesUnchanged } from '../files/identity.ts';
import { listedFiles, verifierOf } from '../sources/listed-files.ts';
import { countPartitions, findCut, groupFiles, pageVersion, type Cut, type FileGroup } from './plan.ts';
import { writeEncodedRows } from './row-stream.ts';
import type { Reservation } from '../engine/temp-budget.ts';
import { FORMATS } from '../formats.ts';
import { streamWrittenAhead } from './write-ahead.ts';

interface StreamPlan {
  groups: FileGroup[];
  cut: Cut;
  /** This response's share of TEMP_DIR_MAX_MB, given back when the response ends. */
  reservation: Reservation;
}

type Head = Omit<Extract, 'chunks' | 'dispose'>;

/**
 * Every row counted (per partition), the cut at ROW_LIMIT found and the partitions grouped before
 * the first byte; the groups are written as the client reads.
 */
export async function streamGroups(p: PreparedExtract<ExtractContext>): Promise<Extract> {
  const { ctx, req, spec, sources, connection: c } = p;
  const parts = sources.partitions;
  // Partitions past the one where the response is cut are not counted (their count stays 0).
  const counts = await countPartitions(c, { spec, partitions: parts, window: req.window, rowsByFile: sources.rowsByFile, rowLimit: ctx.rowLimit });
  ctx.signal.throwIfAborted();
  const cut = await findCut(c, { spec, partitions: parts, counts, window: req.window, rowLimit: ctx.rowLimit, keyed: req.keyed === true });
  const groups = groupFiles({ partitions: parts, counts, cutTo: cut.to, groupRows: ctx.groupRows, sortedFiles: sources.sortedFiles });
  ctx.signal.throwIfAborted();
  // A file that changed since it was listed is still a status code here, not a cut transfer.
  await assertFilesUnchanged(req.descriptor.name, listedFiles(sources));
  const reservation = ctx.tempBudget.reserve(ctx.aheadBytes);
  // Groups lease their own connections while they are written: none is held for the client.
  p.release();
  return streamedExtract(p, { groups, cut, reservation }, {
    way: 'stream',
    observation: sources.observation,
    dataVersion: pageVersion(sources, cut),
    folderValue: sources.folderValue,
    correction: sources.correction,
    returned: cut.returned,
    truncated: cut.returned < counts.reduce((a, b) => a + b, 0),
    next: cut.next,
    ...(cut.lastKey ? { lastKey: cut.lastKey } : {}),
    bytes: null,
  });
}

/** A response whose groups are written ahead of the client into temp files, each on a connection leased for that write. */
function streamedExtract(p: PreparedExtract<ExtractContext>, plan: StreamPlan, head: Head): Extract {
  return { ...head, ...readOnce(groupsBody(p, plan), () => plan.reservation.release()) };
}

/** The groups written ahead as the format wants them: text rows by COPY or JavaScript, or one columnar assembly. */
function groupsBody(p: PreparedExtract<ExtractContext>, plan: StreamPlan): (keyValues: Readonly<Record<string, string>>) => AsyncGenerator<Buffer> {
  const { ctx, req, spec } = p;
  const { groups, cut } = plan;
  const rules = FORMATS[req.format];
  const native = rules.native(req.descriptor);
  const rows = (i: number) => {
    const g = groups[i]!;
    return compileRows({ spec, files: g.files, select: rules.rows, from: req.window?.from ?? null, to: cut.to, limit: cut.limit, order: g.presorted ? 'stored' : 'sort' });
  };
  const verify = verifierOf(req.descriptor.name, p.sources);
  const writeAhead = {
    tempDir: ctx.tempDir,
    waitLease: (signal: AbortSignal) => ctx.engine.acquireBulk(ctx.owner ?? '', signal),
    tryLease: () => ctx.engine.tryAcquireBulk(ctx.owner ?? ''),
    // Rows built in JavaScript share one thread: a second group in flight would only add memory.
    maxInFlight: native ? ctx.connectionsPerExtract : 1,
    aheadBytes: ctx.aheadBytes,
    room: (bytes: number) => ctx.tempBudget.resize(plan.reservation, Math.max(ctx.aheadBytes, bytes)),
    expected: cut.returned,
    signal: ctx.signal,
    engineWork: ctx.engineWork ?? (() => () => undefined),
    // An empty Parquet response writes its schema from no files at all.
    verify: (i: number) => verify(groups[i]?.files ?? []),
  };
  return (keyValues) => {
    const body = rules.body;
    if (body.kind === 'columnar') {
      const columnar = { descriptor: req.descriptor, tempDir: ctx.tempDir, parquetRowGroupRows: ctx.parquetRowGroupRows, groups: groups.length, rows, writeAhead };
      return COLUMNAR_ASSEMBLIES[body.assembly](columnar, keyValues);
    }
    // A format without an encoder is always written by DuckDB.
    const encode = body.encode;
    return streamWrittenAhead({
      ...writeAhead,
      groups: groups.length,
      write:
        native || !encode
          ? (i, c, target) => copyInto(c, compileCopy(rows(i), body.copy, target, ctx.tempDir))
          : (i, c, target, signal) => writeEncodedRows(c, rows(i), encode, target, signal),
      skipFirstBytes: body.separator.length,
    });
  };
}
