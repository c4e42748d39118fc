import { describe, expect, it } from 'vitest';
import { FORMAT_NAMES, FORMATS } from '../../../queries/formats.ts';
import { negotiateFormat } from '../../../server/http/media-types.ts';

describe('the response format from format and Accept', () => {
  it('format=csv gives CSV whatever Accept asks for', () => {
    expect(negotiateFormat('csv', FORMATS.parquet.mediaType)).toBe('csv');
  });

  it('Accept chooses Parquet or Arrow by media type, the higher q first, unless another entry is preferred', () => {
    expect(negotiateFormat('geojson', `${FORMATS.arrow.mediaType}, ${FORMATS.parquet.mediaType}`)).toBe('arrow');
    expect(negotiateFormat('geojson', `${FORMATS.arrow.mediaType};q=0.4, ${FORMATS.parquet.mediaType};q=0.6`)).toBe('parquet');
    expect(negotiateFormat('geojson', `${FORMATS.parquet.mediaType};q=0.5, text/html`)).toBe('geojson');
    expect(negotiateFormat('geojson', `${FORMATS.parquet.mediaType};q=0`)).toBe('geojson');
  });

  it('an Accept entry named like a property of a plain object is just another media type', () => {
    for (const accept of ['constructor', '__proto__', 'tostring']) expect(negotiateFormat('geojson', accept)).toBe('geojson');
  });

  it('every format has its own media type', () => {
    expect(new Set(FORMAT_NAMES.map((f) => FORMATS[f].mediaType)).size).toBe(FORMAT_NAMES.length);
  });
});
