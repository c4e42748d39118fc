import type { Compiled } from './compile.ts';
import { quoteFilePath } from './sql.ts';

/**
 * How DuckDB's own CSV writer writes a text format's rows into a group file: formatting and quoting
 * stay native, and the rows never become JavaScript values.
 */
export interface TextCopy {
  /** The COPY statement's options. */
  options: string;
  /** The select COPY writes, over the rows' select. */
  select(rowsSql: string): string;
}

export const CSV_COPY: TextCopy = {
  options: "FORMAT csv, HEADER false, QUOTE '\"', ESCAPE '\"'",
  select: (rowsSql) => rowsSql,
};

/**
 * GeoJSON Features one per line, each prefixed with the separating comma; the control-character
 * delimiter and quote never trigger quoting because JSON text escapes every control character.
 */
export const FEATURE_COPY: TextCopy = {
  options: "FORMAT csv, HEADER false, DELIMITER '\x01', QUOTE '\x02', ESCAPE '\x02'",
  select: (rowsSql) => `SELECT ',' || feature FROM (${rowsSql})`,
};

/** The group's rows written by DuckDB's CSV writer into `target` (a temp file). */
export function compileCopy(rows: Compiled, copy: TextCopy, target: string, tempDir: string): Compiled {
  return { sql: `COPY (${copy.select(rows.sql)}) TO ${quoteFilePath(target, tempDir, 'TEMP_DIR')} (${copy.options})`, params: rows.params };
}
