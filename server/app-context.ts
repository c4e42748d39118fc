import type { ExtractContext } from '../queries/renderings/rendered.ts';
import type { CorrectionStore } from '../queries/files/corrections.ts';
import type { Extents } from '../queries/files/extent.ts';
import type { FileStates } from '../queries/files/states.ts';
import type { SplitMemo } from '../queries/aggregate/aggregate-split-memo.ts';
import type { Config } from './config.ts';
import type { Metrics } from './metrics.ts';

/** What routes need, made once per app by buildApp (no module-level singletons). */
export interface AppContext {
  config: Config;
  metrics: Metrics;
  /** The latest verdict on each data file, for /readyz and /metrics. */
  files: FileStates;
  /** The bounding box of each dataset's rows, measured once per file. */
  extents: Extents;
  extract: Omit<ExtractContext, 'nowMs' | 'signal' | 'engineWork' | 'owner'> & { corrections: CorrectionStore; splitMemo: SplitMemo };
}
