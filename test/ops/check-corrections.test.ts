import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fireApi } from '../helpers/cli.ts';
import { MODEL_A, MODEL_B, publish } from '../helpers/corrections.ts';
import { writeSampleData } from '../helpers/sample-data.ts';

const rule = MODEL_B.rules[0]!;
const model = (id: string, rules: unknown[]) => ({ ...MODEL_B, id, rules });

/** One model file for each problem `fire-api check` must name (the sample registry holds ST0001 and ST0002). */
const BROKEN: [string, unknown, RegExp][] = [
  ['quantity', model('quantity', [{ ...rule, quantity: 'dewPointC' }]), /quantity\.json: rules\[0\]\.quantity: unknown quantity; one of: airTemperatureC, /],
  ['station', model('station', [{ ...rule, stationId: 'ST0009' }]), /station\.json: rules\[0\]: unknown station ST0009/],
  ['overlap', model('overlap', [rule, { ...rule, stationId: 'ST0001', fromUtc: '2025-12-31T00:00:00Z' }]), /overlap\.json: rules\[0\] and rules\[1\] overlap \(airTemperatureC, station ST0001\)/],
  ['backwards', model('backwards', [{ ...rule, toUtc: '2025-08-01T12:30:00Z' }]), /backwards\.json: rules\[0\]: fromUtc 2025-08-01T12:30:00Z is not before toUtc 2025-08-01T12:30:00Z/],
  ['no-such-day', model('no-such-day', [{ ...rule, fromUtc: '2025-02-30T00:00:00Z' }]), /no-such-day\.json: rules\[0\]\.fromUtc: must be a UTC instant/],
  ['local-time', { ...model('local-time', []), publishedUtc: '2025-10-01T00:00:00+02:00' }, /local-time\.json: publishedUtc: must be a UTC instant/],
  ['renamed', model('another-name', []), /renamed\.json: id 'another-name' is not the file's name \('renamed'\)/],
  ['truncated', '{"id": "truncated", "rules": [', /truncated\.json: not JSON/],
];

describe('fire-api check: correction models', () => {
  it('exits 0 and counts the valid models when every model file is valid', async () => {
    const dir = await writeSampleData();
    await publish(dir, { ...MODEL_A, rules: MODEL_A.rules.map((r) => ({ ...r, stationId: r.stationId === '*' ? '*' : 'ST0001' })) });
    const r = await fireApi(['check', '--data-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sensor-readings correction models: 1 file, 1 valid, 0 failing');
  });

  it('names each invalid model file with what is wrong (quantity, station, overlap, times, id, JSON) and exits 1', async () => {
    const dir = await writeSampleData();
    for (const [id, content] of BROKEN) await publish(dir, typeof content === 'string' ? content : JSON.stringify(content), id);
    // A symbolic link is never followed (its target could be any file), whatever it points to.
    await writeFile(path.join(dir, 'linked-target.json'), JSON.stringify(model('linked', [])));
    await symlink(path.join(dir, 'linked-target.json'), path.join(dir, 'sensor-readings/_corrections/linked.json'));
    const failing: [string, unknown, RegExp][] = [...BROKEN, ['linked', null, /linked\.json: a symbolic link \(never followed\)/]];
    const r = await fireApi(['check', '--data-dir', dir, '--dataset', 'sensor-readings']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`sensor-readings correction models: ${failing.length} files, 0 valid, ${failing.length} failing`);
    for (const [, , problem] of failing) expect(r.stdout).toMatch(problem);
    const json = JSON.parse((await fireApi(['check', '--data-dir', dir, '--dataset', 'sensor-readings', '--json'])).stdout) as { datasets: { corrections: { failing: { path: string }[] } }[] };
    expect(json.datasets[0]!.corrections.failing.map((f) => f.path)).toEqual(failing.map(([id]) => `sensor-readings/_corrections/${id}.json`).sort());
  });
});
