import type { DatasetDescriptor } from '../../datasets/index.ts';
import { ARROW_END_OF_STREAM, arrowSchema, arrowSchemaMessage, writeArrowRows } from '../encode/arrow-ipc.ts';
import { compileEmptyColumnar, compileParquetCopy, GEOMETRY_COLUMN, hasColumnarGeometry } from '../sql/compile-columnar.ts';
import type { Compiled } from '../sql/compile.ts';
import { copyInto } from '../encode/copy-stream.ts';
import type { ColumnarBody } from '../formats.ts';
import { combineFooters, PARQUET_MAGIC, readGroupFooter, type GroupFooter } from '../../shared/parquet/combine-footers.ts';
import { geoMetadata } from '../../shared/parquet/geo-metadata.ts';
import { streamWrittenAhead, type WriteAheadPlan } from './write-ahead.ts';

export interface ColumnarGroups {
  descriptor: DatasetDescriptor;
  tempDir: string;
  /** Rows per Parquet row group (PARQUET_ROW_GROUP_ROWS). */
  parquetRowGroupRows: number;
  /** Groups of the response (none when its window has no rows). */
  groups: number;
  /** The ordered select of group `i`. */
  rows(i: number): Compiled;
  /** Everything the write-ahead needs besides the groups and how each is written. */
  writeAhead: Omit<WriteAheadPlan, 'groups' | 'write' | 'skipFirstBytes'>;
}

/**
 * A Parquet response: the magic, each group's row groups as DuckDB wrote them into the group's own
 * file, then one footer over all of them. A group that fails, or rows short of the promise, throw
 * before the footer: the client never holds a readable file with missing rows.
 */
export async function* parquetBody(p: ColumnarGroups, keyValues: Readonly<Record<string, string>>): AsyncGenerator<Buffer> {
  const footers: GroupFooter[] = [];
  // An empty window still gets a file with the schema: one group of no rows, with no data files.
  const select = (i: number) => (p.groups === 0 ? { sql: compileEmptyColumnar(p.descriptor), params: [] } : p.rows(i));
  yield PARQUET_MAGIC;
  yield* streamWrittenAhead({
    ...p.writeAhead,
    groups: Math.max(1, p.groups),
    skipFirstBytes: 0,
    write: async (i, c, target) => {
      const rows = await copyInto(c, compileParquetCopy(select(i), target, p.tempDir, p.parquetRowGroupRows));
      footers[i] = await readGroupFooter(target);
      return rows;
    },
    span: (i) => ({ start: PARQUET_MAGIC.length, end: footers[i]!.bodyEnd }),
  });
  const geo: Record<string, string> = hasColumnarGeometry(p.descriptor) ? { geo: geoMetadata(footers, GEOMETRY_COLUMN) } : {};
  yield combineFooters(footers, { ...keyValues, ...geo });
}

/**
 * An Arrow IPC stream: the schema message (with `keyValues` as schema metadata), each group's
 * record batches, the end-of-stream marker. A failure throws before the marker and the transfer
 * is cut (a reader may take a stream without its marker as whole, but not a cut transfer).
 */
export async function* arrowBody(p: ColumnarGroups, keyValues: Readonly<Record<string, string>>): AsyncGenerator<Buffer> {
  yield arrowSchemaMessage(arrowSchema(p.descriptor, keyValues));
  yield* streamWrittenAhead({
    ...p.writeAhead,
    groups: p.groups,
    skipFirstBytes: 0,
    write: (i, c, target, signal) => writeArrowRows(c, p.rows(i), target, p.descriptor, signal),
  });
  yield ARROW_END_OF_STREAM;
}

/** How each columnar body is assembled from its groups. */
export const COLUMNAR_ASSEMBLIES: Record<ColumnarBody['assembly'], (p: ColumnarGroups, keyValues: Readonly<Record<string, string>>) => AsyncGenerator<Buffer>> = {
  parquet: parquetBody,
  arrow: arrowBody,
};
