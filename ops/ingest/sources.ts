// Which reader and mapper turn a source file into rows of a dataset, by dataset and file type.

import path from 'node:path';
import { fileColumns, type DatasetDescriptor } from '../../datasets/index.ts';
import { readCsv } from './csv-reader.ts';
import { effisRow, readGeoJson, readShapefile, type SourceFeature } from './effis.ts';
import { firmsMapper } from './firms.ts';
import { FileProblem, partitionDir, RowProblem, typedRow, type StagedRow, type StageValue } from './values.ts';

/** A row in the contract's schema, or why its source line cannot be one. */
export type SourceRow = { line: number; row: StagedRow } | { line: number; problem: string };

export interface SourceOptions {
  /** FIRMS product id for every row, instead of deriving it from satellite, instrument and version. */
  product?: string | undefined;
}

type Mapper = (fields: readonly string[]) => StageValue[];

/** CSV with the contract's column names (any order, extra columns ignored), values checked by type and allowed values. */
function contractCsvMapper(d: DatasetDescriptor, header: readonly string[]): Mapper {
  const missing = fileColumns(d).filter((c) => !header.includes(c.name));
  if (missing.length > 0) throw new FileProblem(`column ${missing.map((c) => c.name).join(', ')} missing from the header`);
  const index = new Map(header.map((name, i) => [name, i]));
  const allowed = d.filters.filter((f) => f.allowed);
  return (fields) => {
    if (fields.length !== header.length) throw new RowProblem(`${fields.length} fields, the header has ${header.length}`);
    const values = typedRow(d, (name) => fields[index.get(name)!]);
    for (const f of allowed) {
      const value = values[fileColumns(d).findIndex((c) => c.name === f.column)];
      if (!f.allowed!.includes(String(value))) throw new RowProblem(`${f.column}: '${String(value)}' is not one of ${f.allowed!.join(', ')}`);
    }
    return values;
  };
}

function stage(d: DatasetDescriptor, line: number, values: () => StageValue[]): SourceRow {
  try {
    const row = values();
    return { line, row: { dir: partitionDir(d, row), values: row } };
  } catch (e) {
    if (e instanceof RowProblem) return { line, problem: e.message };
    throw e;
  }
}

async function* csvRows(d: DatasetDescriptor, file: string, opts: SourceOptions): AsyncGenerator<SourceRow> {
  let mapper: Mapper | null = null;
  for await (const record of readCsv(file)) {
    if (!mapper) {
      const header = record.fields.map((f) => f.trim());
      mapper = d.name === 'hotspots' ? firmsMapper(header, opts.product) : contractCsvMapper(d, header);
      continue;
    }
    const map = mapper;
    yield stage(d, record.line, () => map(record.fields));
  }
  if (!mapper) throw new FileProblem('empty file (no header)');
}

async function* featureRows(d: DatasetDescriptor, features: AsyncGenerator<SourceFeature>): AsyncGenerator<SourceRow> {
  for await (const { line, feature } of features) yield stage(d, line, () => effisRow(feature));
}

/** The file types each dataset is ingested from. */
export const SOURCE_TYPES: Record<string, readonly string[]> = {
  hotspots: ['.csv (FIRMS)'],
  'burnt-areas': ['.geojson', '.json', '.shp (with .dbf)'],
  'fire-danger': ['.csv'],
  'sensor-readings': ['.csv'],
  'sensor-stations': ['.csv'],
};

/** Rows of one source file in file order; a FileProblem when the file is not a source of `d` at all. */
export function sourceRows(d: DatasetDescriptor, file: string, opts: SourceOptions): AsyncGenerator<SourceRow> {
  const ext = path.extname(file).toLowerCase();
  if (d.name === 'burnt-areas') {
    if (ext === '.geojson' || ext === '.json') return featureRows(d, readGeoJson(file));
    if (ext === '.shp') return featureRows(d, readShapefile(file));
  } else if (ext === '.csv') return csvRows(d, file, opts);
  throw new FileProblem(`${d.name} is ingested from ${SOURCE_TYPES[d.name]?.join(', ')}, not '${ext || path.basename(file)}'`);
}
