import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { SUITE_TREE } from './test/helpers/compiled-tree.ts';
import { MissingServicesReporter } from './test/reporters/missing-services.ts';
import { waitingFirst } from './test/setup/waiting-first.ts';

// Files run side by side: much of their time is spent waiting (HTTP, DuckDB reading Parquet, child
// processes, Chromium, throttled readers). Each file has its own ports (port 0), temp folders
// (mkdtemp), servers and child processes. TEST_WORKERS sets how many (1: one file at a time). Three
// on 2 cores: with two, the cores were idle a third of the run (files waiting on nginx, Chromium,
// throttled readers); with three the suite took 544 s rather than 724 s, in about as much CPU.
const WORKERS = Number(process.env.TEST_WORKERS ?? 3);

// Files whose tests hold a deadline of the product (a bad file seen within 10 s), race a timer
// against DuckDB (an interrupt after 50 ms) or a window of the rate limiter, or wait 30 s for
// Chromium: they failed with other files sharing the cores (3 at a time on 2 cores, another suite
// running too), so they run one at a time after the rest.
const ALONE = [
  'test/ops/background-checks.test.ts',
  'test/server/warm-checks.test.ts',
  'test/queries/extract/row-stream.test.ts',
  'test/client/extract-retry.test.ts',
  'test/server/explore/explore-edges.test.ts',
  'test/server/rendered/rendered-large.test.ts',
  'test/server/stream-integrity.test.ts',
];
// Files that spend most of their time waiting (nginx's fail_timeout, the bench's timed runs, Chromium,
// throttled readers, child processes): longest first, before the rest, so their waits overlap the
// other files' work (measured: each took 1.5 to 4 times its CPU time in wall time).
const WAITING = [
  'test/deploy/scale-out.test.ts',
  'test/bench/bench-smoke.test.ts',
  'test/bench/bench-capacity-smoke.test.ts',
  'test/server/explore/explore-views.test.ts',
  'test/ops/ingest-firms.test.ts',
  'test/bench/soak.test.ts',
  'test/server/explore/explore-page.test.ts',
  'test/server/slow-readers.test.ts',
];
// A file moved without its entry here would run shared again (or in vitest's order), unnoticed.
for (const file of [...ALONE, ...WAITING]) if (!existsSync(file)) throw new Error(`vitest.config.ts: ${file} (ALONE or WAITING) does not exist`);

export default defineConfig({
  test: {
    // A test waits for the state it means; the timeout only stops a hang. Files sharing the cores
    // make a busy test slower than alone, hence twice what one file at a time needed.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    sequence: { sequencer: waitingFirst(WAITING) },
    // The `fire-api` children the tests start run the compiled tree this builds (test/setup/compiled-tree.ts).
    globalSetup: ['test/setup/compiled-tree.ts'],
    env: { COMPILED_DIR: SUITE_TREE },
    reporters: ['default', new MissingServicesReporter()],
    projects: [
      // One module graph a worker, not one a file: the product's modules are imported once a worker, not once a file
      // (about 200 s of import time a run). A file must then leave nothing the next one could see: its servers closed,
      // timers real again, no environment changed (test/setup/leaves-nothing.ts checks each file).
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ALONE, maxWorkers: WORKERS, isolate: false, setupFiles: ['test/setup/leaves-nothing.ts'], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
