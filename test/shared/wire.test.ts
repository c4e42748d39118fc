import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../datasets/index.ts';
import { SIMULATED_DATASETS, WINDOWLESS_DATASETS } from '../../shared/wire.ts';

describe('what the client knows about the datasets matches the service', () => {
  it('the datasets that take simulated=true|false are the ones the client sends simulated=false to', () => {
    expect(DATASETS.filter((d) => d.filters.some((f) => f.param === 'simulated')).map((d) => d.name)).toEqual(SIMULATED_DATASETS);
  });

  it('the datasets without a time window are the ones the client extracts without --from and --to', () => {
    expect(DATASETS.filter((d) => d.time === null).map((d) => d.name)).toEqual(WINDOWLESS_DATASETS);
  });
});
