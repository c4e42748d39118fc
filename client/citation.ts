import { SERVICE_NAME } from '../shared/wire.ts';
import type { Manifest } from './manifest.ts';

/** What a citation is built from: the manifest without its citation. */
export type CitedManifest = Omit<Manifest, 'citation'>;

export interface Citation {
  text: string;
  bibtex: string;
  cslJson: Record<string, unknown>;
}

const distinct = (values: readonly string[]) => [...new Set(values)];

/** The window the server used: from its first page to the end of the walk (null for a dataset without one). */
function citedWindow(m: CitedManifest): { from: string; to: string } | null {
  const first = m.pages[0]?.window;
  return first ? { from: first.from, to: m.pages.at(-1)?.window?.to ?? first.to } : null;
}

const parametersText = (m: CitedManifest) => {
  const entries = Object.entries(m.parameters).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(', ') : 'none';
};

function facts(m: CitedManifest) {
  const window = citedWindow(m);
  const retrieved = m.completedAtUtc.slice(0, 10);
  const versions = distinct(m.pages.map((p) => p.dataVersion));
  const simulated = m.simulatedSeries === 'included' ? '; simulated series included (not citable as observations)' : m.simulatedSeries === 'excluded' ? '; simulated series excluded' : '';
  const corrected = m.correctionModel ? `; corrected with correction model ${m.correctionModel}` : m.parameters.series === 'corrected' ? '; corrected series, no correction model applied' : '';
  return { window, retrieved, versions, series: simulated + corrected, windowText: window ? `${window.from} to ${window.to} (half-open)` : 'no time window' };
}

/** A BibTeX key from the dataset, the window start and the file hash: stable for the same extract. */
function citationKey(m: CitedManifest): string {
  const start = (citedWindow(m)?.from ?? '').slice(0, 10).replaceAll('-', '');
  return ['fireapi', m.dataset.replace(/[^a-z0-9]/g, ''), start, m.file.sha256.slice(0, 8)].filter(Boolean).join('_');
}

/** BibTeX's special characters, escaped so a file name or URL cannot break the entry. */
const BIB: Record<string, string> = { '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', '%': '\\%', '&': '\\&', '#': '\\#', _: '\\_', $: '\\$', '^': '\\^{}', '~': '\\~{}' };
const bib = (s: string) => s.replace(/[\\{}%&#_$^~]/g, (c) => BIB[c]!);

function bibtex(m: CitedManifest, title: string, note: string): string {
  const f = facts(m);
  const fields = [
    ['title', `{${bib(title)}}`],
    ['author', `{${bib(SERVICE_NAME)}}`],
    ['howpublished', `\\url{${m.service.replace(/[{}\\]/g, '')}/api/v1/${m.dataset}}`],
    ['year', f.retrieved.slice(0, 4)],
    ['urldate', f.retrieved],
    ['version', bib(f.versions.join(', '))],
    ['note', bib(note)],
  ];
  return `@misc{${citationKey(m)},\n${fields.map(([k, v]) => `  ${k} = {${v}}`).join(',\n')}\n}\n`;
}

/**
 * The citation of an extract, built only from its manifest, so the same manifest always gives the
 * same citation: service, dataset, window, parameters, retrieval date, data versions, file SHA-256.
 */
export function buildCitation(m: CitedManifest): Citation {
  const f = facts(m);
  const title = `${SERVICE_NAME}: ${m.dataset}, ${f.windowText}`;
  const note = `Parameters: ${parametersText(m)}${f.series}. Data versions: ${f.versions.join(', ') || 'none'}. File ${m.file.name} (${m.format}, ${m.rows} rows), SHA-256 ${m.file.sha256}.`;
  const url = `${m.service}/api/v1/${m.dataset}`;
  const text = `${SERVICE_NAME} (${f.retrieved.slice(0, 4)}). ${m.dataset}, ${f.windowText} [data set]. ${url}. Retrieved ${f.retrieved}. ${note}`;
  const [y, mo, d] = f.retrieved.split('-').map(Number);
  const cslJson = {
    id: citationKey(m),
    type: 'dataset',
    title,
    author: [{ literal: SERVICE_NAME }],
    URL: url,
    accessed: { 'date-parts': [[y, mo, d]] },
    issued: { 'date-parts': [[y]] },
    version: f.versions.join(', '),
    medium: m.format,
    note,
  };
  return { text, bibtex: bibtex(m, title, note), cslJson };
}
