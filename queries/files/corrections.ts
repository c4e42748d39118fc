import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { correctionModelSchema, instantKey, modelProblems, schemaProblems, type CorrectionModel } from '../../datasets/correction-model.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { CorrectionsUnavailableError, DataParameterError } from '../errors.ts';
import type { FailingFile } from './states.ts';

/** The folder of a dataset's correction models: `_`-prefixed, so it is never read as a partition. */
export const CORRECTIONS_FOLDER = '_corrections';

/** A model as published: valid, with the hash of its content (part of every corrected response's data version). */
export interface PublishedModel {
  id: string;
  hash: string;
  model: CorrectionModel;
}

export interface PublishedModels {
  /** Valid models, oldest `publishedUtc` first (ties by id): the last is the default. */
  models: PublishedModel[];
  /** Model files that cannot be read or are invalid, paths relative to DATA_DIR. */
  failing: FailingFile[];
}

/** Model files are `<id>.json`; hidden names are files being written (beside, then renamed). */
const isModelFileName = (name: string) => !name.startsWith('.') && name.endsWith('.json');

const KEPT = 1000;

/**
 * A dataset's published correction models, read from `DATA_DIR/<dataset>/_corrections/` each time
 * they are asked for (a listing and a few small files: a model published or withdrawn counts at
 * once, however it was written). Each file's verdict is kept by the hash of its bytes.
 */
export class CorrectionStore {
  private readonly verdicts = new Map<string, PublishedModel | { problem: string }>();

  constructor(private readonly dataDir: string) {}

  async load(d: DatasetDescriptor): Promise<PublishedModels> {
    const dir = path.join(this.dataDir, d.name, CORRECTIONS_FOLDER);
    const rel = (name: string) => path.relative(this.dataDir, path.join(dir, name));
    let names: string[];
    try {
      names = (await readdir(dir)).filter(isModelFileName).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { models: [], failing: [] };
      return { models: [], failing: [{ path: rel(''), problem: 'folder unreadable' }] };
    }
    const result: PublishedModels = { models: [], failing: [] };
    for (const name of names) {
      const verdict = await this.verdict(d, path.join(dir, name), name.slice(0, -'.json'.length));
      if (verdict === null) continue;
      if ('problem' in verdict) result.failing.push({ path: rel(name), problem: verdict.problem });
      else result.models.push(verdict);
    }
    result.models.sort((a, b) => compareText(instantKey(a.model.publishedUtc), instantKey(b.model.publishedUtc)) || compareText(a.id, b.id));
    return result;
  }

  /** The file judged; null when it was removed since the listing (withdrawn: no longer published). */
  private async verdict(d: DatasetDescriptor, file: string, fileId: string): Promise<PublishedModel | { problem: string } | null> {
    let bytes: Buffer;
    try {
      bytes = await readModelFile(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return null;
      // Symbolic links are never followed, as for data files: a model is a file in this folder.
      return { problem: code === 'ELOOP' ? 'a symbolic link (never followed)' : 'unreadable' };
    }
    const key = `${d.name}\0${fileId}\0${createHash('sha256').update(bytes).digest('hex')}`;
    let verdict = this.verdicts.get(key);
    if (!verdict) {
      verdict = parseModel(d, bytes, fileId);
      if (this.verdicts.size >= KEPT) this.verdicts.clear();
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }
}

async function readModelFile(file: string): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A model file's bytes judged: the model, or every problem found, in words. */
export function parseModel(d: DatasetDescriptor, bytes: Buffer, fileId: string): PublishedModel | { problem: string } {
  if (!d.correction) throw new Error(`${d.name} has no correction layer`);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    // The parser's message quotes the file's bytes, and /readyz is read without a key.
    return { problem: 'not JSON' };
  }
  const parsed = correctionModelSchema(d.correction.quantities).safeParse(json);
  if (!parsed.success) return { problem: schemaProblems(parsed.error).join('; ') };
  const problems = modelProblems(parsed.data, fileId);
  if (problems.length > 0) return { problem: problems.join('; ') };
  const m = parsed.data;
  const content = JSON.stringify([m.id, m.publishedUtc, m.description, m.rules.map((r) => [r.stationId, r.quantity, r.fromUtc, r.toUtc, r.factor, r.offset])]);
  return { id: m.id, hash: createHash('sha256').update(content).digest('hex'), model: m };
}

/**
 * The model a request of the corrected series applies: the one pinned, or the latest published;
 * null when none is published. Any model file that cannot be used makes the whole layer
 * unavailable: the service cannot tell which model would have been the latest.
 */
export async function chooseCorrection(store: CorrectionStore, d: DatasetDescriptor, pinned: string | undefined): Promise<PublishedModel | null> {
  const layer = d.correction;
  if (!layer) return null;
  const { models, failing } = await store.load(d);
  if (failing.length > 0) throw new CorrectionsUnavailableError(d.name, failing);
  if (pinned === undefined) return models.at(-1) ?? null;
  const chosen = models.find((m) => m.id === pinned);
  if (chosen) return chosen;
  // parseDatasetQuery admits only plain ids, so the value is safe to quote back.
  const published = models.length ? `published: ${models.map((m) => m.id).join(', ')}` : 'no correction model is published';
  throw new DataParameterError(layer.param, `unknown ${layer.param} '${pinned}'; ${published}`);
}
