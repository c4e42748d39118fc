import { describe, expect, it } from 'vitest';
import {
  FWI_START,
  buildupIndex,
  dailySeverityRating,
  fireWeatherIndex,
  initialSpreadIndex,
  stepFwi,
  type FwiCodes,
} from '../../demo/fwi.ts';

// The standard check data of Van Wagner & Pickett (1985), reprinted by Wang, Anderson &
// Suddaby (2015): one station from 13 April, start values FFMC 85, DMC 6, DC 15.
// month day temp rh wind rain | FFMC DMC DC ISI BUI FWI (published to one decimal).
const PUBLISHED = `
4 13 17 42 25 0     | 87.7 8.5 19 10.9 8.5 10.1
4 14 20 21 25 2.4   | 86.2 10.4 23.6 8.8 10.4 9.3
4 15 8.5 40 17 0    | 87 11.8 26.1 6.5 11.7 7.6
4 16 6.5 25 6 0     | 88.8 13.2 28.2 4.9 13.1 6.2
4 17 13 34 24 0     | 89.1 15.4 31.5 12.6 15.3 14.8
4 18 6 40 22 0.4    | 88.7 16.5 33.5 10.7 16.4 13.5
4 19 5.5 52 6 0     | 87.4 17.2 35.4 4 17.1 5.9
4 20 8.5 46 16 0    | 87.4 18.5 37.9 6.6 18.4 9.7
4 21 9.5 54 20 0    | 86.8 19.7 40.6 7.4 19.6 11
4 22 7 93 14 9      | 29.9 10.1 29.5 0 10.9 0
4 23 6.5 71 17 1    | 49.4 10.7 31.6 0.4 11.6 0.2
4 24 6 59 17 0      | 67.3 11.4 33.7 1.3 12.3 0.9
4 25 13 52 4 0      | 77.8 13 37 1.1 13.9 0.8
4 26 15.5 40 11 0   | 85.5 15.4 40.7 3.9 15.9 5.5
4 27 23 25 9 0      | 91.5 19.8 45.8 8.4 19.8 12.2
5 7 28 17 27 0      | 95.2 54.5 102.1 34.5 54.3 52.6
5 8 23.5 54 20 0    | 89.7 57.4 108.8 11.3 57.2 25.9
5 9 16 50 22 12.2   | 62.2 29.9 91.8 1.4 33 3
`;

// Days 28 April to 6 May of the same series, needed to carry the codes up to 7 May.
const GAP = [
  [4, 19, 46, 16, 0], [4, 18, 41, 20, 0], [4, 14.5, 51, 16, 0], [5, 14.5, 69, 11, 0], [5, 15.5, 42, 8, 0],
  [5, 21, 37, 8, 0], [5, 23, 32, 16, 0], [5, 23, 32, 14, 0], [5, 27, 33, 12, 0],
] as const;

function parsePublished(): { month: number; weather: number[]; expected: number[] }[] {
  return PUBLISHED.trim().split('\n').map((line) => {
    const [input = '', output = ''] = line.split('|');
    const [month = 0, , ...weather] = input.trim().split(/\s+/).map(Number);
    return { month, weather, expected: output.trim().split(/\s+/).map(Number) };
  });
}

function asWeather(values: readonly number[]) {
  const [tempC = NaN, rhPct = NaN, windKmh = NaN, rainMm = NaN] = values;
  return { tempC, rhPct, windKmh, rainMm };
}

describe('FWI system (Van Wagner 1987)', () => {
  it('reproduces the published Van Wagner & Pickett check data to 0.1, codes carried day to day', () => {
    const rows = parsePublished();
    let codes: FwiCodes = FWI_START;
    let checked = 0;
    for (const [index, row] of rows.entries()) {
      if (index === 15) {
        for (const [month, ...weather] of GAP) codes = stepFwi(codes, asWeather(weather), month);
      }
      const day = stepFwi(codes, asWeather(row.weather), row.month);
      const got = [day.ffmc, day.dmc, day.dc, day.isi, day.bui, day.fwi];
      got.forEach((value, column) => expect(Math.abs(value - (row.expected[column] ?? NaN))).toBeLessThanOrEqual(0.1 + 1e-9));
      codes = day;
      checked += 1;
    }
    expect(checked).toBe(18);
  });

  it('dries the fine fuel on a hot, dry, windy day and wets it after heavy rain', () => {
    const dry = stepFwi(FWI_START, { tempC: 35, rhPct: 15, windKmh: 30, rainMm: 0 }, 8);
    const wet = stepFwi(FWI_START, { tempC: 15, rhPct: 95, windKmh: 5, rainMm: 25 }, 8);
    expect(dry.ffmc).toBeGreaterThan(90);
    expect(wet.ffmc).toBeLessThan(40);
    expect(dry.fwi).toBeGreaterThan(wet.fwi);
  });

  it('computes ISI, BUI, FWI and DSR from hand-checked values', () => {
    // FFMC 85 -> m = 147.2*16/144.5 = 16.299; f = 19.115 e^(-2.2590) (1 + 16.299^5.31 / 4.93e7) = 2.107
    expect(initialSpreadIndex(85, 0)).toBeCloseTo(2.107, 3);
    expect(initialSpreadIndex(85, 20)).toBeCloseTo(2.107 * Math.exp(0.05039 * 20), 2);
    // DMC 6 <= 0.4*DC 15: BUI = 0.8*6*15 / (6 + 6) = 6
    expect(buildupIndex(6, 15)).toBeCloseTo(6, 10);
    expect(buildupIndex(0, 0)).toBe(0);
    // ISI 10, BUI 80: B = 0.1*10*(0.626*80^0.809 + 2) = 23.69; FWI = e^(2.72 (0.434 ln B)^0.647) = 28.22
    expect(fireWeatherIndex(10, 80)).toBeCloseTo(28.22, 2);
    expect(fireWeatherIndex(0.5, 10)).toBeLessThan(1);
    expect(dailySeverityRating(10)).toBeCloseTo(0.0272 * 10 ** 1.77, 10);
    expect(dailySeverityRating(28.22)).toBeCloseTo(10.05, 2);
  });
});
