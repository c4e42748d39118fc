import type { AggregateKey } from '../../datasets/index.ts';

/** Time buckets: UTC calendar periods labelled by their start; `all` is one bucket labelled by the window's start. */
export const INTERVALS = ['hour', 'day', 'week', 'month', 'year', 'all'] as const;
export type Interval = (typeof INTERVALS)[number];

/** What a stat computes over a measure's non-null values. */
export const STAT_FUNCTIONS = ['count', 'sum', 'min', 'max', 'mean'] as const;
export type StatFunction = (typeof STAT_FUNCTIONS)[number];

/** Grid cell sizes in degrees, as the parameter spells them; each is a whole number of hundredths of a degree. */
export const CELL_SIZES = ['0.01', '0.05', '0.1', '0.25', '0.5', '1', '2', '5', '10'] as const;
export type CellSize = (typeof CELL_SIZES)[number];

/** Most group keys one aggregate takes. */
export const MAX_GROUP_KEYS = 3;

/** `count` (rows of the group), or `<column>.<fn>` over one measure. */
export type Stat = { name: 'count' } | { name: string; column: string; fn: StatFunction };

/** What an aggregate computes, validated against its dataset's declaration. */
export interface AggregateShape {
  interval: Interval;
  /** In the order asked. */
  keys: readonly AggregateKey[];
  /** The grid's cell size in hundredths of a degree, when `grid` is a key. */
  cellHundredths: number | null;
  /** In the order asked; `count` is always among them. */
  stats: readonly Stat[];
}

export const cellHundredths = (cell: CellSize): number => Math.round(Number(cell) * 100);

/** A cell's west (or south) edge in degrees: index × size from −180 (or −90), computed as one correctly rounded division so SQL and JavaScript agree. */
export const cellEdge = (index: number, hundredths: number, origin: -180 | -90): number => (index * hundredths + origin * 100) / 100;
