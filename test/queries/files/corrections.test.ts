import { describe, expect, it } from 'vitest';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { CorrectionsUnavailableError, DataParameterError } from '../../../queries/errors.ts';
import { chooseCorrection, CorrectionStore } from '../../../queries/files/corrections.ts';
import { MODEL_B, publish, withdraw } from '../../helpers/corrections.ts';
import { tempDir } from '../../helpers/fixtures.ts';

const at = (id: string, publishedUtc: string) => ({ ...MODEL_B, id, publishedUtc });

describe('published correction models', () => {
  it('the latest is by the instant publishedUtc names (a fraction counts), ties by id; no folder is no model', async () => {
    const dir = await tempDir();
    const store = new CorrectionStore(dir);
    expect(await chooseCorrection(store, sensorReadings, undefined)).toBeNull();
    await publish(dir, at('b-whole-second', '2025-09-01T00:00:00Z'));
    await publish(dir, at('a-half-second', '2025-09-01T00:00:00.5Z'));
    await publish(dir, at('c-earlier', '2025-08-31T23:59:59.999999Z'));
    expect((await store.load(sensorReadings)).models.map((m) => m.id)).toEqual(['c-earlier', 'b-whole-second', 'a-half-second']);
    await publish(dir, at('z-same-instant', '2025-09-01T00:00:00.500Z'));
    expect((await chooseCorrection(store, sensorReadings, undefined))?.id).toBe('z-same-instant');
    expect((await chooseCorrection(store, sensorReadings, 'c-earlier'))?.id).toBe('c-earlier');
    await expect(chooseCorrection(store, sensorReadings, 'nope')).rejects.toThrow(DataParameterError);
    await withdraw(dir, 'z-same-instant');
    expect((await chooseCorrection(store, sensorReadings, undefined))?.id).toBe('a-half-second');
  });

  it('one unusable file makes the whole layer unavailable, a pinned valid model included', async () => {
    const dir = await tempDir();
    const store = new CorrectionStore(dir);
    await publish(dir, at('good', '2025-09-01T00:00:00Z'));
    await publish(dir, { ...at('bad', '2025-09-02T00:00:00Z'), rules: [{ ...MODEL_B.rules[0], factor: 'two' }] });
    const loaded = await store.load(sensorReadings);
    expect(loaded.failing).toEqual([{ path: 'sensor-readings/_corrections/bad.json', problem: 'rules[0].factor: Invalid input: expected number, received string' }]);
    await expect(chooseCorrection(store, sensorReadings, 'good')).rejects.toThrow(CorrectionsUnavailableError);
  });

  // The problems reach /readyz, read without a key: a member's name is the file's own text.
  it('names no unknown member of a model file, only where it is and how many', async () => {
    const dir = await tempDir();
    await publish(dir, { ...at('noted', '2025-09-01T00:00:00Z'), 'internal note: ask J. Doe': 1 });
    const loaded = await new CorrectionStore(dir).load(sensorReadings);
    expect(loaded.failing).toEqual([{ path: 'sensor-readings/_corrections/noted.json', problem: 'the model: 1 unknown member(s)' }]);
  });
});
