import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { combineFooters, groupKeyValue, PARQUET_MAGIC, readGroupFooter, type GroupFooter } from '../shared/parquet/combine-footers.ts';
import { geoMetadata } from '../shared/parquet/geo-metadata.ts';
import { COLUMNAR_META_KEY, SIMULATED_DATASETS } from '../shared/wire.ts';
import { buildCitation } from './citation.ts';
import { ClientError } from './errors.ts';
import { MAX_FOOTER_BYTES } from './pages/parquet-page.ts';
import { TOOL } from './io.ts';
import { ROWS_HASH_DEFINITION, type Manifest } from './manifest.ts';
import { sha256File, writeJsonAtomic } from './output-file.ts';
import { rowsDone, walkParameters, type ResumeState } from './resume-state.ts';

export interface ExtractPaths {
  out: string;
  /** CSV: the file being written. GeoJSON: the features only, one per line. Parquet: the pages as served, one after the other. */
  partial: string;
  /** Completed pages with their end offsets in `partial`. */
  state: string;
  /** GeoJSON: meta + features + closing; Parquet: every page's row groups under one footer; before the rename. */
  assembly: string;
  manifest: string;
}

export const extractPaths = (out: string): ExtractPaths => ({
  out,
  partial: `${out}.partial`,
  state: `${out}.resume.json`,
  assembly: `${out}.assembling`,
  manifest: `${out}.manifest.json`,
});

const distinct = (values: string[]) => [...new Set(values)];

/**
 * The combined file's meta: the server's field names where they mean the same thing for the whole
 * extract (it is complete, so truncated is false and next is null), and `assembled` for what only
 * an assembled file has. No times or addresses: the same walk over the same data gives the same bytes.
 */
export function assembledMeta(state: ResumeState): Record<string, unknown> {
  const first = state.pages[0];
  return {
    dataset: state.identity.dataset,
    window: first?.window ?? null,
    query: state.query,
    truncated: false,
    returned: rowsDone(state),
    next: null,
    assembled: { by: `${TOOL.name} extract`, pages: state.pages.length, dataVersions: distinct(state.pages.map((p) => p.dataVersion)) },
  };
}

/** Streams meta, the features body and the closing into `target`, hashing as it writes. */
async function assembleGeoJson(body: string, target: string, state: ResumeState): Promise<{ bytes: number; sha256: string }> {
  const out = await hashedWriter(target);
  try {
    await out.write(Buffer.from(`{"type":"FeatureCollection","meta":${JSON.stringify(assembledMeta(state))},"features":[`));
    for await (const chunk of createReadStream(body)) await out.write(chunk as Buffer);
    await out.write(Buffer.from(rowsDone(state) > 0 ? '\n]}\n' : ']}\n'));
    return await out.done();
  } finally {
    await out.close();
  }
}

/** A file written piece by piece, hashed as it is written. */
async function hashedWriter(target: string) {
  const hash = createHash('sha256');
  const handle = await open(target, 'w');
  let bytes = 0;
  return {
    write: async (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
      await handle.write(chunk);
    },
    /** Synced and closed: the size and SHA-256 of what was written. */
    done: async () => {
      await handle.sync();
      return { bytes, sha256: hash.digest('hex') };
    },
    close: () => handle.close(),
  };
}

/**
 * One Parquet file from the pages kept one after the other in `body`: each page's row-group bytes
 * copied in order (streamed, never held), then one footer over all of them with the assembled meta
 * and a GeoParquet `geo` block whose bbox covers every page. Every page is the same select, so
 * the schemas must agree.
 */
async function assembleParquet(body: string, target: string, state: ResumeState): Promise<{ bytes: number; sha256: string }> {
  const out = await hashedWriter(target);
  try {
    await out.write(PARQUET_MAGIC);
    const footers: GroupFooter[] = [];
    let start = 0;
    for (const page of state.pages) {
      const where = `window ${page.index + 1} in ${path.basename(body)}`;
      const footer = await readGroupFooter(body, { start, end: page.endOffset }, MAX_FOOTER_BYTES).catch((e: unknown) => {
        throw new ClientError(`${where} is not a whole Parquet file (${(e as Error).message}); pass --restart to start over`);
      });
      // The bytes kept must still be the rows served: a damaged partial file is never assembled.
      const rows = createHash('sha256');
      if (footer.bodyEnd > PARQUET_MAGIC.length) {
        for await (const chunk of createReadStream(body, { start: start + PARQUET_MAGIC.length, end: start + footer.bodyEnd - 1 })) {
          rows.update(chunk as Buffer);
          await out.write(chunk as Buffer);
        }
      }
      if (rows.digest('hex') !== page.rowsSha256) throw new ClientError(`${where} no longer holds the rows it was served with; pass --restart to start over`);
      footers.push(footer);
      start = page.endOffset;
    }
    try {
      const geo = footers[0] && groupKeyValue(footers[0].meta, 'geo');
      const column = geo === undefined ? null : ((JSON.parse(geo) as { primary_column?: unknown }).primary_column ?? 'geometry');
      if (column !== null && typeof column !== 'string') throw new Error('the geo metadata names no primary column');
      const keyValues = { [COLUMNAR_META_KEY]: JSON.stringify(assembledMeta(state)), ...(column === null ? {} : { geo: geoMetadata(footers, column) }) };
      await out.write(combineFooters(footers, keyValues));
    } catch (e) {
      throw new ClientError(`the pages cannot be joined into one Parquet file: ${(e as Error).message}`);
    }
    return await out.done();
  } finally {
    await out.close();
  }
}

/** Simulated series are excluded from every citable dataset: an extract that includes them is not citable. */
function simulatedSeries(dataset: string, parameters: Readonly<Record<string, string>>): NonNullable<Manifest['simulatedSeries']> {
  // An aggregate (`sensor-readings/aggregate`) summarises its dataset's series, simulated ones included unless excluded.
  if (!SIMULATED_DATASETS.includes(dataset.split('/')[0]!)) return 'none';
  return parameters.simulated === 'false' ? 'excluded' : 'included';
}

export function buildManifest(state: ResumeState, file: Manifest['file']): Manifest {
  const { service, dataset, format, from, to, parameters } = state.identity;
  const simulated = simulatedSeries(dataset, parameters);
  const manifest: Omit<Manifest, 'citation'> = {
    manifestVersion: 1,
    tool: TOOL,
    service,
    dataset,
    format,
    window: from === null || to === null ? null : { from, to },
    parameters: walkParameters(state),
    queryInEffect: state.query,
    csvHeader: state.csvHeader,
    rowLimit: state.rowLimit,
    startedAtUtc: state.startedAtUtc,
    completedAtUtc: new Date().toISOString(),
    hashes: { rowsSha256: ROWS_HASH_DEFINITION, fileSha256: 'SHA-256 of the whole output file' },
    pages: state.pages.map(({ endOffset: _, ...page }) => page),
    rows: rowsDone(state),
    file,
    citable: simulated !== 'included',
    simulatedSeries: simulated,
    ...(state.query && 'correctionModel' in state.query ? { correctionModel: state.query.correctionModel ?? null } : {}),
  };
  return { ...manifest, citation: buildCitation(manifest) };
}

/**
 * Manifest first, then the rename: a run killed in between still has its state and partial
 * output, so running it again redoes only this step. The output name never holds a partial file.
 */
export async function finishExtract(state: ResumeState, paths: ExtractPaths): Promise<Manifest> {
  const format = state.identity.format;
  const csv = format === 'csv';
  const done = csv ? await sha256File(paths.partial) : format === 'parquet' ? await assembleParquet(paths.partial, paths.assembly, state) : await assembleGeoJson(paths.partial, paths.assembly, state);
  const manifest = buildManifest(state, { name: path.basename(paths.out), ...done });
  await writeJsonAtomic(paths.manifest, manifest);
  await rename(csv ? paths.partial : paths.assembly, paths.out);
  await rm(paths.partial, { force: true });
  await rm(paths.state, { force: true });
  return manifest;
}
