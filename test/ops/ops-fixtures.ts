import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { FileChecker, type FileVerdict } from '../../queries/files/check.ts';
import { listFiles, partitionRange } from '../../queries/files/partitions.ts';

export const VIIRS_HEADER = 'latitude,longitude,bright_ti4,scan,track,acq_date,acq_time,satellite,instrument,confidence,version,bright_ti5,frp,daynight';
export const MODIS_HEADER = 'latitude,longitude,brightness,scan,track,acq_date,acq_time,satellite,instrument,confidence,version,bright_t31,frp,daynight,type,country_id';

/** Every file under `dir` (relative paths, sorted), hidden ones included. */
export async function allFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

/** The server's own file check over every data file of a partition folder (`date=...`, `month=...` or '' for none). */
export async function checkPartition(dataDir: string, d: DatasetDescriptor, dir: string): Promise<FileVerdict[]> {
  const key = path.basename(dir).split('=')[1] ?? '';
  const range = d.time ? partitionRange(d.time.partition, key) : null;
  const files = await listFiles(path.join(dataDir, d.name, dir), d.name);
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    const checker = new FileChecker(dataDir);
    return await Promise.all(files.map((f) => checker.check(c, d, range ? { ...f, partition: range } : f)));
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}
