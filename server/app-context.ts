import type { ExtractContext } from '../queries/extract.ts';
import type { Config } from './config.ts';
import type { Metrics } from './metrics.ts';

/** What routes need, made once per app by buildApp (no module-level singletons). */
export interface AppContext {
  config: Config;
  metrics: Metrics;
  extract: Omit<ExtractContext, 'nowMs' | 'signal' | 'engineWork' | 'owner'>;
}
