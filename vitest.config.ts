import { defineConfig } from 'vitest/config';
import { MissingServicesReporter } from './test/reporters/missing-services.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', new MissingServicesReporter()],
  },
});
