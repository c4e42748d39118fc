import { stationProblems } from '../datasets/correction-model.ts';
import { STATIONS_DATASET, type DatasetDescriptor } from '../datasets/index.ts';
import type { Engine } from '../queries/engine/engine.ts';
import { CorrectionStore } from '../queries/files/corrections.ts';
import { listDatasetFiles } from '../queries/files/partitions.ts';
import type { FailingFile } from '../queries/files/states.ts';
import { ident, readParquet } from '../queries/sql/sql.ts';

/** A dataset's correction models as `fire-api check` reports them. */
export interface CorrectionsCheck {
  /** Model files that are valid. */
  valid: number;
  /** Model files that cannot be read or are invalid (the server answers the corrected series 503), or name unknown stations. */
  failing: FailingFile[];
  /** Why station ids were not checked, or null when they were. */
  stationsNotChecked: string | null;
}

/** The station ids of the registry, or why they cannot be read. */
async function stationIds(engine: Engine, dataDir: string): Promise<Set<string> | string> {
  let files;
  try {
    files = (await listDatasetFiles(dataDir, STATIONS_DATASET)).files.map((f) => f.path);
  } catch {
    return 'the sensor-stations folder cannot be listed';
  }
  if (files.length === 0) return 'the sensor-stations folder holds no file';
  const lease = await engine.acquire();
  try {
    const sql = `SELECT DISTINCT ${ident('stationId')} FROM ${readParquet(files, dataDir)}`;
    return new Set((await lease.connection.runAndReadAll(sql)).getRows().map((r) => String(r[0])));
  } catch {
    return 'the sensor-stations files cannot be read';
  } finally {
    lease.release();
  }
}

/** Every model file of `d`: read and judged as the server judges it, and each rule's station looked up in the registry. */
export async function checkCorrections(engine: Engine, dataDir: string, d: DatasetDescriptor): Promise<CorrectionsCheck> {
  const { models, failing } = await new CorrectionStore(dataDir).load(d);
  const stations = await stationIds(engine, dataDir);
  const report: CorrectionsCheck = { valid: models.length, failing: [...failing], stationsNotChecked: typeof stations === 'string' ? stations : null };
  if (typeof stations === 'string') return report;
  for (const m of models) {
    const problems = stationProblems(m.model, stations);
    if (problems.length === 0) continue;
    report.valid--;
    report.failing.push({ path: `${d.name}/_corrections/${m.id}.json`, problem: problems.join('; ') });
  }
  report.failing.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return report;
}
