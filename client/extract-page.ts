import { ClientError, ProtocolError } from './errors.ts';
import type { ExtractRun } from './extract-run.ts';
import type { PageRecord } from './manifest.ts';
import { acceptOf, pageUrl, readPage, sameQuery, type PageResult, type PageSink } from './pages/page-request.ts';
import { retryMessage } from './progress.ts';
import { rowsDone, walkParameters, type ResumeState } from './resume-state.ts';
import { withRetries } from './retry.ts';

/**
 * Writes a page into the partial output as it arrives. CSV: the header only before the first
 * page (later headers must match it), then the records. GeoJSON: one feature per line, with the
 * separating comma, so the assembled file is the body copied between a head and a tail.
 * Parquet: each page as served, a whole Parquet file, one after the other; assembling moves their
 * row groups under one footer.
 */
function pageSink(run: ExtractRun, firstRow: number): PageSink {
  const { state, out } = run;
  let row = firstRow;
  return {
    header: (text) => {
      if (state.pages.length === 0) out.append(text);
      else if (text !== state.csvHeader) throw new ProtocolError('the CSV columns changed during the walk');
    },
    data: (bytes) => out.append(bytes),
    feature: (text) => {
      out.append(row++ === 0 ? '\n' : ',\n');
      out.append(text);
    },
    drain: () => out.drain(),
  };
}

/** The manifest's record of a page, and what the first page tells about the whole walk. */
export interface FetchedPage extends Pick<PageResult, 'rowLimit' | 'csvHeader' | 'query'> {
  record: PageRecord;
}

/** One window with retries; every attempt starts again from the page's first byte. */
export async function fetchPage(run: ExtractRun, from: string | null): Promise<FetchedPage> {
  const { state, out, opts } = run;
  const url = pageUrl({ ...state.identity, parameters: walkParameters(state), from });
  const startOffset = out.size;
  const firstRow = rowsDone(state);
  const what = from === null ? 'the registry' : `window ${state.pages.length + 1} (from ${from})`;
  const attempt = async () => {
    await out.truncate(startOffset);
    run.progress.update(0);
    const format = state.identity.format;
    return run.client.get(url, (res) => readPage(res, format, pageSink(run, firstRow), (n) => run.progress.update(n)), acceptOf(format));
  };
  const page = await withRetries(what, opts.retry, attempt, (n) => run.progress.note(retryMessage(what, n)));
  const { rowsSha256, returned, window, truncated, nextFrom, dataVersion, rowLimit, csvHeader, query } = page;
  const request = from === null || state.identity.to === null ? null : { from, to: state.identity.to };
  const fetchedAtUtc = new Date().toISOString();
  const record = { index: state.pages.length, request, window, truncated, nextFrom, dataVersion, returned, firstRow, rowsSha256, fetchedAtUtc };
  return { record, rowLimit, csvHeader, query };
}

/** What the contract promises about a page of a walk; a page that breaks it is not recorded. */
export function checkPage(state: ResumeState, fetched: FetchedPage): void {
  const page = fetched.record;
  const from = page.request?.from ?? null;
  if (page.truncated && page.nextFrom === null) {
    const what = from === null ? `more than ${fetched.rowLimit} rows and no time window to continue in` : `more than ${fetched.rowLimit} rows share its first instant, and the server has no way to continue inside one instant`;
    throw new ClientError(`the ${from === null ? 'dataset' : `window from ${from}`} cannot be extracted completely: ${what}. Ask the operator to raise ROW_LIMIT.`);
  }
  if (!page.truncated && page.nextFrom !== null) throw new ProtocolError(`a page that is not truncated names a next window (${page.nextFrom})`);
  if (page.nextFrom !== null && (page.nextFrom === from || page.nextFrom === page.window?.from)) {
    throw new ProtocolError(`the server's next window starts where this one did (${from}); the walk would not advance`);
  }
  if (state.pages.length > 0 && !sameQuery(fetched.query, state.query)) {
    throw new ProtocolError(`the parameters in effect changed during the walk: ${JSON.stringify(state.query)} became ${JSON.stringify(fetched.query)}`);
  }
}
