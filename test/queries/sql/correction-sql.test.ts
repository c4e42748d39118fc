import { describe, expect, it } from 'vitest';
import type { CorrectionModel } from '../../../datasets/correction-model.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { arrowRows, compileRows, csvRows, featureRows, parquetRows } from '../../../queries/sql/compile.ts';
import { compileStaged } from '../../../queries/sql/compile-staged.ts';
import { csvText, FROM, openFixtures, spec, TO } from './compile-fixtures.ts';

/** Rule values that could not appear in SQL text by chance. */
const MODEL: CorrectionModel = {
  id: 'model-7f3a',
  publishedUtc: '2025-09-01T00:00:00Z',
  description: 'x',
  rules: [
    { stationId: 'S1', quantity: 'relativeHumidityPct', fromUtc: '2025-08-01T00:05:00Z', toUtc: '2025-08-01T00:15:00Z', factor: 1.0734521, offset: -2.718281 },
    { stationId: '*', quantity: 'windSpeedMs', fromUtc: null, toUtc: null, factor: 0.5, offset: 0.125 },
  ],
};
const VALUES = ['model-7f3a', 'S1', '2025-08-01T00:05:00Z', '2025-08-01T00:15:00Z', '1.0734521', '-2.718281', '0.125'];
const SELECTS = { csvRows, featureRows, parquetRows, arrowRows };

describe('the correction layer in SQL', () => {
  it.each(Object.entries(SELECTS))('%s: every rule value is bound, none is in the statement text', async (_name, select) => {
    const { dataDir, files } = await openFixtures();
    const q = compileRows({ spec: spec(sensorReadings, dataDir, { params: { series: 'corrected' }, correction: MODEL, stationFiles: files['sensor-stations']! }), files: files['sensor-readings']!, select, from: FROM, to: TO });
    for (const v of VALUES) {
      expect(q.sql).not.toContain(v);
      expect(q.params).toContain(v);
    }
  });

  it('without a model the statements are the raw series\' own, byte for byte', async () => {
    const { dataDir, files } = await openFixtures();
    for (const select of Object.values(SELECTS)) {
      const at = (correction: CorrectionModel | null | undefined) => compileRows({ spec: spec(sensorReadings, dataDir, { params: { series: 'raw' }, correction }), files: files['sensor-readings']!, select, from: FROM, to: TO });
      expect(at(null)).toEqual(at(undefined));
    }
  });

  it('staged: the fill binds the rule values and stores corrected values; the Feature select binds nothing', async () => {
    const { dataDir, files } = await openFixtures();
    const staged = compileStaged({ spec: spec(sensorReadings, dataDir, { params: { series: 'corrected' }, correction: MODEL, stationFiles: files['sensor-stations']! }), files: files['sensor-readings']!, select: featureRows, from: FROM, to: TO })!;
    for (const v of VALUES) {
      expect(staged.fill.sql + staged.rows).not.toContain(v);
      expect(staged.fill.params).toContain(v);
    }
  });

  it('a rule applies in [fromUtc, toUtc) to its station and quantity; elsewhere the raw value', async () => {
    const { c, dataDir, files } = await openFixtures();
    const run = (correction: CorrectionModel | null) =>
      csvText(c, compileRows({ spec: spec(sensorReadings, dataDir, { params: { series: 'corrected' }, correction }), files: files['sensor-readings']!, select: csvRows, from: FROM, to: TO }));
    const [raw, corrected] = [await run(null), await run(MODEL)];
    const cells = (text: string) => text.trim().split('\n').map((l) => l.split(','));
    const expected = cells(raw).map((r) => {
      const out = [...r];
      out[4] = MODEL.id;
      if (r[0] === 'S1' && r[1] === '2025-08-01T00:10:00Z') out[6] = String(Number(r[6]) * 1.0734521 - 2.718281);
      out[7] = String(Number(r[7]) * 0.5 + 0.125);
      return out;
    });
    expect(cells(corrected)).toEqual(expected);
  });
});
