import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldFds, type SoakResult } from '../../bench/scenarios/soak.ts';
import { runBenchReport, type BenchReport } from '../helpers/bench-run.ts';

const TINY = ['--scale', '0.05', '--days', '3', '--end', '2025-08-01', '--keys', '4'];
/** A short soak: bounded in requests, not in time (the bench's own is 100,000). */
const REQUESTS = 1000;

// `npm run bench -- --only soak`, short: one server, mixed requests, then the server idle again.
describe('soak: mixed requests against one server give back what they took', () => {
  let dir = '';
  let status: number | null = null;
  let output = '';
  let report: BenchReport;
  let soak: SoakResult;

  beforeAll(async () => {
    ({ dir, status, output, report } = await runBenchReport('fire-api-soak-', [...TINY, '--only', 'soak', '--soak-requests', String(REQUESTS)], 120_000));
    soak = report?.scenarios.soak as unknown as SoakResult;
  }, 130_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('makes every request of the mix: every format, 304s, 400s, 404s, OGC pages, clients hanging up mid-body, and no 5xx', () => {
    expect(status, output).toBe(0);
    expect(report.problems, output).toEqual([]);
    expect(soak.requests).toBe(REQUESTS);
    expect(Object.keys(soak.statusCounts).sort()).toEqual(['200', '304', '400', '404']);
    expect(soak.serverErrors).toBe(0);
    expect(soak.broken).toBe(0);
    expect(soak.hungUp).toBeGreaterThan(0);
  });

  it('once the server is idle, its descriptors (clients\' open connections aside) and TEMP_DIR files are back where they started', () => {
    expect(soak.idleReached, output).toBe(true);
    expect(soak.start.fds).toBeGreaterThan(0);
    expect(heldFds(soak.end)).toBeLessThanOrEqual(heldFds(soak.start));
    expect(soak.end.renderingFds).toBeLessThanOrEqual(64);
    expect(soak.end.tempFiles).toBeLessThanOrEqual(soak.start.tempFiles);
    for (const state of [soak.start, soak.checkpoint, soak.end]) expect(state.rssMb > 0 && state.heapUsedMb > 0).toBe(true);
    expect(output).toMatch(/soak: start RSS \d+ MB, heap \d+ MB, \d+ descriptors/);
  });
});
