import { fileColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { parseInstant, type Instant } from '../../queries/instant.ts';

/** A row the source cannot give in the contract's schema; reported with its file and line. */
export class RowProblem extends Error {}

/** A source file that cannot be read as its dataset's source format at all. */
export class FileProblem extends Error {}

/** A value in the staging file: TIMESTAMPTZ as epoch microseconds, GEOMETRY as WKT. */
export type StageValue = string | number | boolean | bigint | null;

/** One source row in the contract's schema, with the partition folder it belongs in. */
export interface StagedRow {
  dir: string;
  values: StageValue[];
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export function parseNumber(text: string, what: string): number {
  const value = Number(text);
  if (!NUMBER.test(text) || !Number.isFinite(value)) throw new RowProblem(`${what}: '${text}' is not a number`);
  return value;
}

/**
 * ISO 8601 as the API reads it, plus the forms exports write: `YYYY-MM-DD HH:MM:SS`, `YYYY/MM/DD`.
 * No offset means UTC, as everywhere in the contract.
 */
export function parseTimestamp(text: string, what: string): Instant {
  const iso = text.trim().replace(/^(\d{4})\/(\d{2})\/(\d{2})/, '$1-$2-$3').replace(/^(\d{4}-\d{2}-\d{2})[ T]/, '$1T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const t = parseInstant(iso.replace(/(T\d{2}:\d{2}:\d{2}\.\d{6})\d+/, '$1'));
  if (t === null) throw new RowProblem(`${what}: '${text}' is not a date or timestamp`);
  return t;
}

function typedValue(c: Column, text: string): StageValue {
  switch (c.type) {
    case 'VARCHAR':
    case 'GEOMETRY':
      return text;
    case 'DOUBLE':
      return parseNumber(text, c.name);
    case 'INTEGER': {
      const n = parseNumber(text, c.name);
      if (!Number.isInteger(n) || Math.abs(n) > 2 ** 31 - 1) throw new RowProblem(`${c.name}: '${text}' is not an integer`);
      return n;
    }
    case 'BIGINT':
      if (!/^[-+]?\d+$/.test(text)) throw new RowProblem(`${c.name}: '${text}' is not an integer`);
      return BigInt(text);
    case 'BOOLEAN':
      if (!/^(true|false)$/i.test(text)) throw new RowProblem(`${c.name}: '${text}' is not true or false`);
      return text.toLowerCase() === 'true';
    case 'TIMESTAMPTZ':
      return parseTimestamp(text, c.name);
  }
}

/** The descriptor's file columns, typed, from their text (empty or absent is null, where allowed). */
export function typedRow(d: DatasetDescriptor, text: (column: string) => string | null | undefined): StageValue[] {
  return fileColumns(d).map((c) => {
    const raw = text(c.name)?.trim();
    if (raw === undefined || raw === '') {
      if (c.nullable) return null;
      throw new RowProblem(`${c.name} is empty`);
    }
    return typedValue(c, raw);
  });
}

/** Folder names become paths: only plain names, never hidden or with separators. */
const FOLDER_VALUE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The partition folder of a row (e.g. `date=2026-03-04`, `model=fwi/month=2026-03`, '' for none). */
export function partitionDir(d: DatasetDescriptor, values: readonly StageValue[]): string {
  const columns = fileColumns(d);
  const value = (name: string) => values[columns.findIndex((c) => c.name === name)];
  const dirs: string[] = [];
  if (d.folderChoice) {
    const chosen = String(value(d.folderChoice.key) ?? '');
    if (!FOLDER_VALUE.test(chosen)) throw new RowProblem(`${d.folderChoice.key}: '${chosen}' cannot name a folder (letters, digits, . _ -)`);
    dirs.push(`${d.folderChoice.key}=${chosen}`);
  }
  if (d.time) {
    const day = new Date(Number((value(d.time.column) as bigint) / 1000n)).toISOString();
    dirs.push(d.time.partition === 'date' ? `date=${day.slice(0, 10)}` : `month=${day.slice(0, 7)}`);
  }
  return dirs.join('/');
}
