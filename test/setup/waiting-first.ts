import path from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/**
 * vitest's order (by the last run's durations; on a fresh clone, larger files first), except that
 * within each project the files that mostly wait start first, in the order given: their waits then overlap the other
 * files' work instead of ending the run with one worker busy and the cores idle.
 */
export function waitingFirst(waiting: readonly string[]) {
  const rank = new Map(waiting.map((file, i) => [path.resolve(file), i]));
  const waits = (f: TestSpecification) => rank.has(path.resolve(f.moduleId));
  const byRank = (a: TestSpecification, b: TestSpecification) => rank.get(path.resolve(a.moduleId))! - rank.get(path.resolve(b.moduleId))!;
  return class WaitingFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const out: TestSpecification[] = [];
      // super.sort keeps each project's files together, in the order the projects run.
      for (let i = 0; i < sorted.length; ) {
        let end = i;
        while (end < sorted.length && sorted[end]!.project.name === sorted[i]!.project.name) end++;
        const block = sorted.slice(i, end);
        out.push(...block.filter(waits).sort(byRank), ...block.filter((f) => !waits(f)));
        i = end;
      }
      return out;
    }
  };
}
