// Canadian Forest Fire Weather Index System, daily version: Van Wagner (1987) with the
// FORTRAN of Van Wagner & Pickett (1985). Equation numbers refer to Van Wagner (1987).
// Inputs are noon LST weather: temperature °C, relative humidity %, 10 m wind km/h,
// 24-hour rain mm. The three moisture codes carry over from one day to the next.

export interface FwiWeather {
  tempC: number;
  rhPct: number;
  windKmh: number;
  rainMm: number;
}

export interface FwiCodes {
  ffmc: number;
  dmc: number;
  dc: number;
}

export interface FwiDay extends FwiCodes {
  isi: number;
  bui: number;
  fwi: number;
  dsr: number;
}

/** Standard start-up values for the first day of the season. */
export const FWI_START: FwiCodes = { ffmc: 85, dmc: 6, dc: 15 };

// Effective day length (DMC) and day-length adjustment (DC) by month, for latitudes
// around 46°N: the values the standard system uses and that European services keep.
const DMC_DAY_LENGTH = [6.5, 7.5, 9.0, 12.8, 13.9, 13.9, 12.4, 10.9, 9.4, 8.0, 7.0, 6.0];
const DC_DAY_LENGTH = [-1.6, -1.6, -1.6, 0.9, 3.8, 5.8, 6.4, 5.0, 2.4, 0.4, -1.6, -1.6];

export function fineFuelMoistureCode(previous: number, weather: FwiWeather): number {
  const { tempC: t, windKmh: w, rainMm: rain } = weather;
  const h = Math.min(100, Math.max(0, weather.rhPct));
  let mo = (147.2 * (101 - previous)) / (59.5 + previous); // Eq. 1
  if (rain > 0.5) {
    const rf = rain - 0.5; // Eq. 2
    let mr = mo + 42.5 * rf * Math.exp(-100 / (251 - mo)) * (1 - Math.exp(-6.93 / rf)); // Eq. 3a
    if (mo > 150) mr += 0.0015 * (mo - 150) ** 2 * Math.sqrt(rf); // Eq. 3b
    mo = Math.min(mr, 250);
  }
  const ed = 0.942 * h ** 0.679 + 11 * Math.exp((h - 100) / 10) + 0.18 * (21.1 - t) * (1 - Math.exp(-0.115 * h)); // Eq. 4
  let m = mo;
  if (mo > ed) {
    const ko = 0.424 * (1 - (h / 100) ** 1.7) + 0.0694 * Math.sqrt(w) * (1 - (h / 100) ** 8); // Eq. 6a
    const kd = ko * 0.581 * Math.exp(0.0365 * t); // Eq. 6b
    m = ed + (mo - ed) * 10 ** -kd; // Eq. 8
  } else {
    const ew = 0.618 * h ** 0.753 + 10 * Math.exp((h - 100) / 10) + 0.18 * (21.1 - t) * (1 - Math.exp(-0.115 * h)); // Eq. 5
    if (mo < ew) {
      const k1 = 0.424 * (1 - ((100 - h) / 100) ** 1.7) + 0.0694 * Math.sqrt(w) * (1 - ((100 - h) / 100) ** 8); // Eq. 7a
      const kw = k1 * 0.581 * Math.exp(0.0365 * t); // Eq. 7b
      m = ew - (ew - mo) * 10 ** -kw; // Eq. 9
    }
  }
  return Math.min(101, Math.max(0, (59.5 * (250 - m)) / (147.2 + m))); // Eq. 10
}

export function duffMoistureCode(previous: number, weather: FwiWeather, month: number): number {
  const t = Math.max(weather.tempC, -1.1);
  const h = Math.min(100, Math.max(0, weather.rhPct));
  const k = 1.894 * (t + 1.1) * (100 - h) * dayLength(DMC_DAY_LENGTH, month) * 1e-4; // Eq. 16, ×100 of Eq. 17
  let pr = previous;
  if (weather.rainMm > 1.5) {
    const re = 0.92 * weather.rainMm - 1.27; // Eq. 11
    const mo = 20 + Math.exp(5.6348 - previous / 43.43); // Eq. 12
    const b =
      previous <= 33 ? 100 / (0.5 + 0.3 * previous) // Eq. 13a
      : previous <= 65 ? 14 - 1.3 * Math.log(previous) // Eq. 13b
      : 6.2 * Math.log(previous) - 17.2; // Eq. 13c
    const mr = mo + (1000 * re) / (48.77 + b * re); // Eq. 14
    pr = Math.max(0, 244.72 - 43.43 * Math.log(mr - 20)); // Eq. 15
  }
  return pr + k;
}

export function droughtCode(previous: number, weather: FwiWeather, month: number): number {
  const t = Math.max(weather.tempC, -2.8);
  const v = Math.max(0, 0.36 * (t + 2.8) + dayLength(DC_DAY_LENGTH, month)); // Eq. 22
  let dr = previous;
  if (weather.rainMm > 2.8) {
    const rd = 0.83 * weather.rainMm - 1.27; // Eq. 18
    const qo = 800 * Math.exp(-previous / 400); // Eq. 19
    const qr = qo + 3.937 * rd; // Eq. 20
    dr = Math.max(0, 400 * Math.log(800 / qr)); // Eq. 21
  }
  return dr + 0.5 * v; // Eq. 23
}

export function initialSpreadIndex(ffmc: number, windKmh: number): number {
  const m = (147.2 * (101 - ffmc)) / (59.5 + ffmc); // Eq. 1
  const f = 19.115 * Math.exp(-0.1386 * m) * (1 + m ** 5.31 / 4.93e7); // Eq. 25
  return f * Math.exp(0.05039 * windKmh); // Eq. 24, 26
}

export function buildupIndex(dmc: number, dc: number): number {
  if (dmc === 0 && dc === 0) return 0;
  const bui =
    dmc <= 0.4 * dc
      ? (0.8 * dmc * dc) / (dmc + 0.4 * dc) // Eq. 27a
      : dmc - (1 - (0.8 * dc) / (dmc + 0.4 * dc)) * (0.92 + (0.0114 * dmc) ** 1.7); // Eq. 27b
  return Math.max(0, bui);
}

export function fireWeatherIndex(isi: number, bui: number): number {
  const fd = bui <= 80 ? 0.626 * bui ** 0.809 + 2 : 1000 / (25 + 108.64 * Math.exp(-0.023 * bui)); // Eq. 28
  const b = 0.1 * isi * fd; // Eq. 29
  return b > 1 ? Math.exp(2.72 * (0.434 * Math.log(b)) ** 0.647) : b; // Eq. 30
}

/** Daily Severity Rating (Van Wagner 1970), the seasonal-average-friendly form of FWI. */
export function dailySeverityRating(fwi: number): number {
  return 0.0272 * fwi ** 1.77;
}

/** One day of the system: yesterday's codes + today's noon weather -> today's values. */
export function stepFwi(previous: FwiCodes, weather: FwiWeather, month: number): FwiDay {
  const ffmc = fineFuelMoistureCode(previous.ffmc, weather);
  const dmc = duffMoistureCode(previous.dmc, weather, month);
  const dc = droughtCode(previous.dc, weather, month);
  const isi = initialSpreadIndex(ffmc, weather.windKmh);
  const bui = buildupIndex(dmc, dc);
  const fwi = fireWeatherIndex(isi, bui);
  return { ffmc, dmc, dc, isi, bui, fwi, dsr: dailySeverityRating(fwi) };
}

function dayLength(table: readonly number[], month: number): number {
  const value = table[month - 1];
  if (value === undefined) throw new Error(`month out of range: ${month}`);
  return value;
}
