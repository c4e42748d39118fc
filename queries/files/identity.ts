import { DatasetUnavailableError } from '../errors.ts';
import { sameFooter } from './footer.ts';
import { asListed, type DataFile } from './data-file.ts';
import { statusOf } from './status.ts';

/** Time stamps may not move for a change within their granularity (up to a second on some file systems): see FolderListings. */
const SETTLED_MS = 2_000;

/**
 * Whether the file's status had not changed for a while when it was listed: then no change since
 * can keep its status change time, and the status alone tells it is the file checked.
 */
const settled = (f: DataFile): boolean => f.ctimeMs !== undefined && f.listedMs !== undefined && f.listedMs - f.ctimeMs > SETTLED_MS;

/**
 * Throws unless every file is still the one listed and checked (`asListed`) and, with
 * `footerHashes`, has the same Parquet footer (read again only for a file whose status had changed
 * just before it was listed). Rows read from a file that changed after its check
 * would not belong to the response's data version.
 *
 * `fromRenderings`: the rows were not read from the files but from their renderings, each keyed by
 * its file's identity as listed and checked footer, and kept only if its file was still that one
 * once rendered. A file settled when listed is then the version the rows are of, whatever became
 * of it since (the answer is that of a request served before the change): not looked at again. A
 * file changed just before it was listed may have been listed mid-change: its footer is read again.
 */
export async function assertFilesUnchanged(dataset: string, files: readonly DataFile[], footerHashes?: ReadonlyMap<string, string>, fromRenderings = false): Promise<void> {
  const changed = () => new DatasetUnavailableError(dataset, 'a data file changed after it was checked');
  await Promise.all(
    files.map(async (f) => {
      const expected = footerHashes?.get(f.path);
      if (expected !== undefined && !settled(f)) {
        if (!(await sameFooter(f, expected))) throw changed();
        return;
      }
      if (fromRenderings && expected !== undefined) return;
      const now = await statusOf(f.path).catch(() => null);
      if (!now || !asListed(f, now)) throw changed();
    }),
  );
}
