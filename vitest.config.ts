import { defineConfig } from 'vitest/config';
import { MissingServicesReporter } from './test/reporters/missing-services.ts';

// Files run side by side: most of their time is spent waiting (HTTP, DuckDB reading Parquet, child
// processes, Chromium, throttled readers), so more files than the 2 cores run at once. Each file has
// its own ports (port 0), temp folders (mkdtemp), servers and child processes; no test judges a
// figure of the machine (the bench smoke tests check what the bench reports, not its values).
// TEST_WORKERS sets how many (1: one file at a time, as before).
const WORKERS = Number(process.env.TEST_WORKERS ?? 3);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A test waits for the state it means; the timeout only stops a hang. Files sharing the cores
    // make a busy test slower than alone, hence twice what one file at a time needed.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: WORKERS,
    reporters: ['default', new MissingServicesReporter()],
  },
});
