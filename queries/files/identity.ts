import { stat } from 'node:fs/promises';
import { DatasetUnavailableError } from '../errors.ts';
import { sameFooter } from './footer.ts';
import { asListed, type DataFile } from './data-file.ts';

/**
 * Throws unless every file is still the one listed and checked (`asListed`) and, with
 * `footerHashes`, has the same Parquet footer. Rows read from a file that changed after its check
 * would not belong to the response's data version.
 */
export async function assertFilesUnchanged(dataset: string, files: readonly DataFile[], footerHashes?: ReadonlyMap<string, string>): Promise<void> {
  const changed = () => new DatasetUnavailableError(dataset, 'a data file changed after it was checked');
  await Promise.all(
    files.map(async (f) => {
      const expected = footerHashes?.get(f.path);
      if (expected !== undefined) {
        if (!(await sameFooter(f, expected))) throw changed();
        return;
      }
      const now = await stat(f.path, { bigint: false }).catch(() => null);
      if (!now || !asListed(f, now)) throw changed();
    }),
  );
}
