import type { ExtractOptions } from './args.ts';
import type { ExtractPaths } from './assemble.ts';
import type { HttpClient } from './pages/http-page.ts';
import type { OutputFile } from './output-file.ts';
import type { Progress } from './progress.ts';
import type { ResumeState } from './resume-state.ts';

/** One extract as it walks: what was asked, where it writes, how far it got. */
export interface ExtractRun {
  opts: ExtractOptions;
  paths: ExtractPaths;
  client: HttpClient;
  state: ResumeState;
  out: OutputFile;
  progress: Progress;
}
