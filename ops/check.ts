import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DATASETS, type DatasetDescriptor } from '../datasets/index.ts';
import { Engine } from '../queries/engine/engine.ts';
import { DatasetUnavailableError } from '../queries/errors.ts';
import { FileChecker } from '../queries/files/check.ts';
import { fileState, type FailingFile } from '../queries/files/states.ts';
import { listDatasetFiles } from '../queries/files/partitions.ts';
import { checkFiles, type CheckedFile } from '../queries/files/warm-checks.ts';
import { UsageError } from '../shared/command-io.ts';
import { checkCorrections, type CorrectionsCheck } from './check-corrections.ts';

/** One dataset's files as `fire-api check` reports them; paths relative to the data folder. */
export interface DatasetCheck {
  dataset: string;
  /** Null when the dataset's folder is missing or unreadable (nothing checked). */
  folderProblem: string | null;
  files: number;
  servable: number;
  failing: FailingFile[];
  /** Servable, but their rows are not stored in order-key order: sorted on the fly. */
  unsorted: string[];
  partitionsWithSeveralFiles: { folder: string; files: number }[];
  malformedFolders: string[];
  ignoredNames: string[];
  /** The correction model files, for a dataset with a correction layer (null otherwise). */
  corrections: CorrectionsCheck | null;
}

function summarize(d: DatasetDescriptor, dataDir: string, checked: readonly CheckedFile[], listing: { malformedFolders: string[]; ignoredNames: string[] }): DatasetCheck {
  const rel = (p: string) => path.relative(dataDir, p);
  const report: DatasetCheck = { dataset: d.name, folderProblem: null, files: checked.length, servable: 0, failing: [], unsorted: [], partitionsWithSeveralFiles: [], malformedFolders: listing.malformedFolders, ignoredNames: listing.ignoredNames, corrections: null };
  const perFolder = new Map<string, number>();
  for (const { file, verdict } of checked) {
    if (verdict.ok) report.servable++;
    else report.failing.push({ path: rel(file.path), problem: verdict.problem });
    if (verdict.ok && fileState(d, verdict) === 'unsorted') report.unsorted.push(rel(file.path));
    const folder = rel(path.dirname(file.path));
    perFolder.set(folder, (perFolder.get(folder) ?? 0) + 1);
  }
  if (d.time) for (const [folder, files] of perFolder) if (files > 1) report.partitionsWithSeveralFiles.push({ folder, files });
  return report;
}

async function checkDataset(engine: Engine, checker: FileChecker, dataDir: string, d: DatasetDescriptor): Promise<DatasetCheck> {
  let listing;
  try {
    listing = await listDatasetFiles(dataDir, d);
  } catch (e) {
    const empty = { malformedFolders: [], ignoredNames: [] };
    return { ...summarize(d, dataDir, [], empty), folderProblem: e instanceof DatasetUnavailableError ? e.reason : (e as Error).message };
  }
  const checked: CheckedFile[] = [];
  await checkFiles(engine, checker, listing.files.map((file) => ({ dataset: d.name, file })), (c) => checked.push(c));
  return { ...summarize(d, dataDir, checked, listing), corrections: d.correction ? await checkCorrections(engine, dataDir, d) : null };
}

/** Every file of `datasets` under `dataDir`, checked in this process by the server's own checks. */
export async function checkData(dataDir: string, datasets: readonly DatasetDescriptor[]): Promise<DatasetCheck[]> {
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-check-'));
  const engine = await Engine.create({ dataDir, tempDir, threads: 1, connections: 1, memoryLimit: '1GB', maxQueued: 0 });
  try {
    const checker = new FileChecker(dataDir);
    const reports: DatasetCheck[] = [];
    for (const d of datasets) reports.push(await checkDataset(engine, checker, dataDir, d));
    return reports;
  } finally {
    engine.close();
    await rm(tempDir, { recursive: true, force: true });
  }
}

function describeCheck(r: DatasetCheck): string[] {
  if (r.folderProblem) return [`${r.dataset}: not checked (${r.folderProblem})`];
  const n = (count: number, what: string) => `${count} ${what}${count === 1 ? '' : 's'}`;
  const lines = [
    `${r.dataset}: ${n(r.files, 'file')}, ${r.servable} servable (${r.unsorted.length} unsorted), ${r.failing.length} failing; ${n(r.partitionsWithSeveralFiles.length, 'partition')} with several files`,
  ];
  for (const f of r.failing) lines.push(`  failing   ${f.path}: ${f.problem}`);
  for (const f of r.unsorted) lines.push(`  unsorted  ${f}`);
  for (const p of r.partitionsWithSeveralFiles) lines.push(`  several   ${p.folder} (${p.files} files)`);
  for (const f of r.malformedFolders) lines.push(`  malformed ${f} (not a valid partition key: never read)`);
  for (const f of r.ignoredNames) lines.push(`  ignored   ${f}`);
  const c = r.corrections;
  if (c && c.valid + c.failing.length > 0) {
    lines.push(`${r.dataset} correction models: ${n(c.valid + c.failing.length, 'file')}, ${c.valid} valid, ${c.failing.length} failing${c.stationsNotChecked ? ` (station ids not checked: ${c.stationsNotChecked})` : ''}`);
    for (const f of c.failing) lines.push(`  failing   ${f.path}: ${f.problem}`);
  }
  return lines;
}

/** `fire-api check`: the exit code (0 all servable, 1 any data or correction model file failing); usage errors throw UsageError. */
export async function checkCommand(args: string[], defaultDataDir: () => string, out: (text: string) => void): Promise<number> {
  const { values } = parseArgs({ args, options: { 'data-dir': { type: 'string' }, dataset: { type: 'string' }, json: { type: 'boolean' } } });
  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  if (!(await stat(dataDir).then((s) => s.isDirectory(), () => false))) throw new UsageError(`no data folder at ${dataDir}`);
  const datasets = values.dataset === undefined ? DATASETS : DATASETS.filter((d) => d.name === values.dataset);
  if (datasets.length === 0) throw new UsageError(`unknown dataset '${values.dataset}'; valid: ${DATASETS.map((d) => d.name).join(', ')}`);
  const reports = await checkData(dataDir, datasets);
  if (values.json) out(JSON.stringify({ dataDir, datasets: reports }, null, 2));
  else for (const r of reports) out(describeCheck(r).join('\n'));
  return reports.some((r) => r.failing.length > 0 || (r.corrections?.failing.length ?? 0) > 0) ? 1 : 0;
}
