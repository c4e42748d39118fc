import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** One record of a CSV file: the 1-based line it starts on and its fields. */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** Splits one record (RFC 4180 quoting); null when a quoted field is still open at the end of `text`. */
export function splitCsvRecord(text: string): string[] | null {
  if (!text.includes('"')) return text.split(',');
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch !== '"') field += ch;
      else if (text[i + 1] === '"') (field += '"'), i++;
      else quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') fields.push(field), (field = '');
    else field += ch;
  }
  if (quoted) return null;
  fields.push(field);
  return fields;
}

/**
 * Records of a CSV file in order, with the line each starts on (a quoted field may span lines).
 * A byte-order mark and CR line ends, as spreadsheet exports write them, are accepted; blank
 * lines are skipped but still counted, so reported line numbers match an editor's.
 */
export async function* readCsv(file: string): AsyncGenerator<CsvRecord> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let lineNo = 0;
  let pending: { line: number; text: string } | null = null;
  for await (const raw of lines) {
    lineNo++;
    const text = lineNo === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    const record: { line: number; text: string } = pending ? { line: pending.line, text: `${pending.text}\n${text}` } : { line: lineNo, text };
    if (!pending && record.text.trim() === '') continue;
    const fields = splitCsvRecord(record.text);
    pending = fields ? null : record;
    if (fields) yield { line: record.line, fields };
  }
  if (pending) yield { line: pending.line, fields: [pending.text] };
}
