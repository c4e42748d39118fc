import { z } from 'zod';
import type { ColumnFilter } from './descriptor.ts';

export const BOOLEAN_TEXT = ['true', 'false'] as const;

/** Station ids enter SQL only as bound values; the alphabet keeps echoes and headers plain ASCII. */
export const STATION_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export const MAX_STATION_IDS = 100;

/** `simulated` and `stationId`: the filters every sensor dataset has (citable extracts leave simulated series out). */
export const stationFilters = (what: string): ColumnFilter[] => [
  {
    param: 'simulated',
    column: 'simulated',
    schema: z.enum(BOOLEAN_TEXT, { error: 'must be true or false' }),
    description: `true: only ${what} of simulated demo stations; false: only real ones (what a citable dataset uses). Omitted: both.`,
    defaultValue: null,
    allowed: BOOLEAN_TEXT,
  },
  {
    param: 'stationId',
    column: 'stationId',
    schema: z.string().regex(STATION_ID, 'each station id must be 1-64 characters of A-Z a-z 0-9 . _ : -'),
    description: `Comma-separated station ids (at most ${MAX_STATION_IDS}); ${what} of any of them.`,
    defaultValue: null,
    list: { maxItems: MAX_STATION_IDS },
    example: 'S1,S2',
  },
];
