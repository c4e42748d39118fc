import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../datasets/index.ts';
import { datasetOperation } from '../../server/openapi/dataset-operation.ts';
import { metaSchema } from '../../server/openapi/wire-schemas.ts';
import { toOpenApiSchema } from '../../server/openapi/schema-convert.ts';

const FILTERS: Record<string, string[]> = {
  hotspots: ['country', 'bbox'],
  'burnt-areas': ['country', 'bbox'],
  'fire-danger': ['level', 'areaCode'],
  'sensor-stations': ['simulated', 'stationId'],
  'sensor-readings': ['simulated', 'stationId'],
};

describe('the OpenAPI document lists each filter on the operations that have it, and only there', () => {
  for (const d of DATASETS) {
    it(`${d.name}: ${FILTERS[d.name]!.join(', ')} as query parameters with a description, and in meta.query`, () => {
      const names = (datasetOperation(d, []).parameters as { name: string; in: string; description?: string }[]).filter((p) => p.in === 'query');
      const filters = names.filter((p) => ['country', 'bbox', 'level', 'areaCode', 'simulated', 'stationId'].includes(p.name));
      expect(filters.map((p) => p.name)).toEqual(FILTERS[d.name]);
      for (const p of filters) expect(p.description).toMatch(/\w/);
      const query = (toOpenApiSchema(metaSchema(d)).properties as Record<string, { properties: Record<string, unknown> }>).query!;
      expect(Object.keys(query.properties)).toEqual(expect.arrayContaining(FILTERS[d.name]!));
    });
  }

  it('bbox documents its four-number syntax as a pattern', () => {
    const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;
    const bbox = (datasetOperation(hotspots, []).parameters as { name: string; schema: { pattern?: string } }[]).find((p) => p.name === 'bbox')!;
    expect(new RegExp(bbox.schema.pattern!).test('-9.5,38.5,-8.5,39.5')).toBe(true);
    expect(new RegExp(bbox.schema.pattern!).test('1,2,3')).toBe(false);
  });
});
