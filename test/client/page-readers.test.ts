import { describe, expect, it } from 'vitest';
import { CsvPageReader } from '../../client/csv-page.ts';
import { ProtocolError } from '../../client/errors.ts';
import { GeoJsonPageReader } from '../../client/geojson-page.ts';
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

  it('a body that ends early is a protocol error, not a shorter page', () => {
    const reader = new GeoJsonPageReader(() => {});
    reader.push(Buffer.from(DOC.slice(0, -4)));
    expect(() => reader.finish()).toThrow(ProtocolError);
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

  it('a body cut inside a record is a protocol error', () => {
    const reader = new CsvPageReader({ header: () => {}, data: () => {} });
    reader.push(Buffer.from(HEADER + 'a,"open'));
    expect(() => reader.finish()).toThrow(ProtocolError);
  });
});
