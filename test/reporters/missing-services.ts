import type { Reporter, TestModule } from 'vitest/node';
import { parseSkipNote } from '../helpers/services.ts';

/**
 * After the run: the tests skipped because a Debian program is not installed, why, and the one
 * `apt-get install` line that lets them run. Silent when nothing was skipped for that reason.
 */
export class MissingServicesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    const packages = new Set<string>();
    for (const mod of testModules) {
      for (const test of mod.children.allTests('skipped')) {
        const result = test.result();
        const needed = parseSkipNote(result.state === 'skipped' ? result.note : undefined);
        if (!needed) continue;
        packages.add(needed.debianPackage);
        lines.push(`  ${mod.relativeModuleId} > ${test.fullName}\n      skipped: ${needed.name} is not installed`);
      }
    }
    if (lines.length === 0) return;
    const out = [
      '',
      `${lines.length} test(s) skipped because a program they need is not installed (with CI=true they fail instead):`,
      ...lines,
      `To run them all: apt-get update && apt-get install -y ${[...packages].sort().join(' ')}`,
      '',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
