import { describe, expect, it } from 'vitest';
import { CsvPageReader } from '../../client/pages/csv-page.ts';
import { ProtocolError, TransferError } from '../../client/errors.ts';
import { GeoJsonPageReader } from '../../client/pages/geojson-page.ts';
import { MAX_FOOTER_BYTES, ParquetPageReader } from '../../client/pages/parquet-page.ts';
import { encodeStruct, T } from '../../shared/parquet/thrift-compact.ts';
import { sha256 } from './harness.ts';

/** Chunk boundaries the server happens to produce are not the only possible ones: cut everywhere. */
const splits = (text: string): Buffer[][] => {
  const b = Buffer.from(text);
  return [[b], [...b].map((x) => Buffer.from([x])), [b.subarray(0, 7), b.subarray(7, 50), b.subarray(50)]];
};

const FEATURES = [
  '{"type":"Feature","id":"a","geometry":{"type":"Polygon","coordinates":[[[1,2],[3,4]]]},"properties":{"note":"braces } ] { [ and \\"quotes\\" and \\\\"}}',
  '{"type":"Feature","id":"b","geometry":null,"properties":{"features":"[not, an, array]","meta":{"x":1},"ü":"ß"}}',
];
const META = { dataset: 'hotspots', query: { country: null }, next: null };
const DOC = `{"type":"FeatureCollection","meta":${JSON.stringify(META)},"features":[${FEATURES.join(',')}]}\n`;

describe('GeoJSON page reader', () => {
  it('hands on each feature exactly as served and the meta block, however the body is chunked', () => {
    for (const chunks of splits(DOC)) {
      const seen: string[] = [];
      const reader = new GeoJsonPageReader((f) => seen.push(f.toString('utf8')));
      for (const c of chunks) reader.push(c);
      const body = reader.finish();
      expect(seen).toEqual(FEATURES);
      expect(body).toMatchObject({ returned: 2, meta: META, rowsSha256: sha256(FEATURES.join('\n')) });
    }
  });

  it('an empty page has no rows and hashes the empty string', () => {
    const reader = new GeoJsonPageReader(() => {});
    reader.push(Buffer.from(`{"type":"FeatureCollection","meta":{"query":{}},"features":[]}`));
    expect(reader.finish()).toMatchObject({ returned: 0, rowsSha256: sha256('') });
  });

  it('a body that ends before the document closes is a cut (retried), not a shorter page', () => {
    const reader = new GeoJsonPageReader(() => {});
    reader.push(Buffer.from(DOC.slice(0, -4)));
    expect(() => reader.finish()).toThrow(TransferError);
    expect(() => reader.finish()).toThrow(/cut off before the end of the GeoJSON document, after 1 complete feature\b/);
  });

  it('a closed document without meta, or one that is not a JSON object, is the server\'s answer (final)', () => {
    const noMeta = new GeoJsonPageReader(() => {});
    noMeta.push(Buffer.from('{"type":"FeatureCollection","features":[]}'));
    expect(() => noMeta.finish()).toThrow(ProtocolError);
    expect(() => new GeoJsonPageReader(() => {}).push(Buffer.from('["not an object"]'))).toThrow(ProtocolError);
  });
});

describe('CSV page reader', () => {
  const HEADER = 'id,version\n';
  const RECORDS = 'a,plain\nb,"two\nlines, ""quoted"""\nc,\n';

  it('counts records by quote state, not lines, and hashes the bytes after the header', () => {
    for (const chunks of splits(HEADER + RECORDS)) {
      let header = '';
      let data = '';
      const reader = new CsvPageReader({ header: (t) => (header = t), data: (b) => (data += b.toString('latin1')) });
      for (const c of chunks) reader.push(c);
      expect(reader.finish()).toMatchObject({ returned: 3, csvHeader: HEADER, rowsSha256: sha256(RECORDS) });
      expect([header, data]).toEqual([HEADER, RECORDS]);
    }
  });

  it('a body cut inside a record, inside a quoted field or inside the header line is a cut (retried)', () => {
    for (const [body, says] of [[HEADER + 'a,plain\nb,"open', /inside a CSV record, after 1 complete row\b/], [HEADER + 'a,plain\nb,pla', /inside a CSV record, after 1 complete row\b/], ['id,ver', /inside the CSV header line/], ['', /inside the CSV header line/]] as const) {
      const reader = new CsvPageReader({ header: () => {}, data: () => {} });
      reader.push(Buffer.from(body));
      expect(() => reader.finish()).toThrow(TransferError);
      expect(() => reader.finish()).toThrow(says);
    }
  });
});

describe('Parquet page reader', () => {
  /** A stand-in Parquet file: magic, `body` as its row groups, a real Thrift footer with the row count and meta. */
  const parquetPage = (body: Buffer, rows: number, meta: object | null): Buffer => {
    const kv = meta === null ? [] : [[{ id: 1, type: T.BINARY, value: Buffer.from('fire_api:meta') }, { id: 2, type: T.BINARY, value: Buffer.from(JSON.stringify(meta)) }]];
    const footer = encodeStruct([
      { id: 3, type: T.I64, value: BigInt(rows) },
      { id: 5, type: T.LIST, value: { elementType: T.STRUCT, items: kv } },
    ]);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length);
    return Buffer.concat([Buffer.from('PAR1'), body, footer, length, Buffer.from('PAR1')]);
  };
  const read = (chunks: Buffer[]) => {
    const seen: Buffer[] = [];
    const reader = new ParquetPageReader((b) => seen.push(b));
    for (const c of chunks) reader.push(c);
    return { body: reader.finish(), seen: Buffer.concat(seen) };
  };

  it('hands on every byte, counts rows from the footer and hashes the row-group bytes, however the body is chunked', () => {
    const body = Buffer.from('row groups, in whatever bytes DuckDB wrote them');
    const page = parquetPage(body, 7, META);
    const byteByByte = [...page].map((x) => Buffer.from([x]));
    for (const chunks of [[page], byteByByte, [page.subarray(0, 3), page.subarray(3, 50), page.subarray(50)]]) {
      const r = read(chunks);
      expect(r.seen.equals(page)).toBe(true);
      expect(r.body).toEqual({ returned: 7, rowsSha256: sha256(body), csvHeader: null, meta: META });
    }
  });

  it('a page larger than the tail it keeps back hashes the same: 20 MB cut into 64 kB chunks', () => {
    const body = Buffer.alloc(20 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4096) body.writeUInt32LE(i, i);
    const page = parquetPage(body, 1_000_000, META);
    const chunks: Buffer[] = [];
    for (let i = 0; i < page.length; i += 65_536) chunks.push(page.subarray(i, i + 65_536));
    const r = read(chunks);
    expect(r.body.rowsSha256).toBe(sha256(body));
    expect(r.body.returned).toBe(1_000_000);
    expect(r.seen.length).toBe(page.length);
  });

  it('a footer larger than any page can need is refused before it is read', () => {
    const huge = Buffer.alloc(MAX_FOOTER_BYTES + 1);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(huge.length);
    const page = Buffer.concat([Buffer.from('PAR1'), Buffer.from('groups'), huge, length, Buffer.from('PAR1')]);
    const chunks: Buffer[] = [];
    for (let i = 0; i < page.length; i += 65_536) chunks.push(page.subarray(i, i + 65_536));
    expect(() => read(chunks)).toThrow(/more than the \d+ a page can need/);
  });

  it('a body cut anywhere before its footer ends is a cut (retried)', () => {
    const page = parquetPage(Buffer.from('groups'), 1, META);
    for (const end of [0, 3, 4, 10, page.length - 9, page.length - 3, page.length - 1]) {
      expect(() => read([page.subarray(0, end)])).toThrow(TransferError);
    }
    expect(() => read([page.subarray(0, 10)])).toThrow(/cut off before the end of the Parquet file, after 10 bytes/);
  });

  it('one that is not Parquet, or a readable footer without meta, is the server\'s answer (final)', () => {
    expect(() => read([Buffer.from('{"type":"FeatureCollection"}PAR1')])).toThrow(ProtocolError);
    const page = parquetPage(Buffer.from('groups'), 1, META);
    expect(() => read([Buffer.concat([Buffer.from('GEOJ'), page.subarray(4)])])).toThrow(/not a Parquet file/);
    expect(() => read([parquetPage(Buffer.from('groups'), 1, null)])).toThrow(/fire_api:meta/);
    expect(() => read([parquetPage(Buffer.from('groups'), 1, null)])).toThrow(ProtocolError);
  });
});
