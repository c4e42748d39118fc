/**
 * Each aggregate of the `aggregate` scenario as DuckDB alone runs it: the server's compiled
 * statement over the bench year (with the files' facts, as a server that has checked them runs it,
 * and without, as over files it knows nothing of), beside the scenario's reference GROUP BY, in one
 * process on every core, best of N. No server, no HTTP: what the statement itself costs.
 *
 *   node --import tsx bench/aggregate-statement.ts [--data-dir DIR] [--year 2025] [--runs 5]
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DATASETS } from '../datasets/index.ts';
import { FileChecker, type FileFacts } from '../queries/files/check.ts';
import { listDatasetFiles } from '../queries/files/partitions.ts';
import { parseInstant } from '../queries/instant.ts';
import { compileAggregate } from '../queries/aggregate/compile-aggregate.ts';
import { factsFor } from '../queries/aggregate/aggregate-slices.ts';
import { parseAggregateQuery } from '../server/params/aggregate-params.ts';
import { AGGREGATE_CASES } from './scenarios/aggregate-scenario.ts';
import { listParquet, readParquetSql, windowWhere } from './server/data.ts';
import { REPO_ROOT } from './lib/options.ts';
import { describeMachine, renderMachine } from './measure/table.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, year: { type: 'string' }, runs: { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-10'));
const year = Number(values.year ?? 2025);
const runs = Number(values.runs ?? 5);
const window = { from: `${year}-01-01`, to: `${year + 1}-01-01` };

async function best(c: DuckDBConnection, sql: string, params: string[] = []): Promise<{ ms: number; rows: number }> {
  let ms = Infinity;
  let rows = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    rows = (await c.runAndReadAll(sql, params)).currentRowCount;
    ms = Math.min(ms, performance.now() - started);
  }
  return { ms, rows };
}

const instance = await DuckDBInstance.create(':memory:', { threads: String(os.availableParallelism()) });
const c = await instance.connect();
console.log(renderMachine(describeMachine()));
console.log(`DATA_DIR ${dataDir}; best of ${runs}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
try {
  for (const k of AGGREGATE_CASES) {
    const d = DATASETS.find((x) => x.name === k.dataset)!;
    const query = Object.fromEntries(new URLSearchParams(k.path(`from=${window.from}&to=${window.to}`).split('?')[1]));
    const { q, shape } = parseAggregateQuery(d, query, parseInstant(`${year + 1}-06-01`)!);
    const w = q.window!;
    const files = (await listDatasetFiles(dataDir, d)).files.filter((f) => f.partition && f.partition.end > w.from && f.partition.start < w.to);
    // The facts as the start-up checks find them, on one connection.
    const checker = new FileChecker(dataDir);
    const factsByFile = new Map<string, FileFacts>();
    for (const f of files) {
      const v = await checker.check(c, d, f);
      if (!v.ok) throw new Error(`${f.path}: ${v.problem}`);
      if (v.facts) factsByFile.set(f.path, v.facts);
    }
    const paths = files.map((f) => f.path);
    const spec = { descriptor: d, dataDir, filters: q.filters, params: q.params, stationFiles: null };
    const statement = (known: boolean) => compileAggregate({ spec, files: paths, window: w, shape, limit: 10_000_000, facts: known ? factsFor({ factsByFile }, paths) : undefined });
    const reference = await best(c, k.reference(readParquetSql(await listParquet(dataDir, k.dataset)), (column) => windowWhere(column, window)));
    const tested = statement(false);
    const known = statement(true);
    const withTests = await best(c, tested.sql, tested.params);
    const withFacts = await best(c, known.sql, known.params);
    if (withTests.rows !== reference.rows || withFacts.rows !== reference.rows) throw new Error(`${k.name}: groups ${withTests.rows} / ${withFacts.rows}, reference ${reference.rows}`);
    console.log(`${k.name}: ${reference.rows} groups; GROUP BY ${reference.ms.toFixed(1)} ms; statement with the per-row tests ${withTests.ms.toFixed(1)} ms (${(withTests.ms / reference.ms).toFixed(2)} ×), with the files' facts ${withFacts.ms.toFixed(1)} ms (${(withFacts.ms / reference.ms).toFixed(2)} ×)`);
  }
} finally {
  c.closeSync();
  instance.closeSync();
}
