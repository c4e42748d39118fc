import { it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { Engine } from '../../queries/engine.ts';
import { tempDir } from '../helpers/fixtures.ts';

it('probe', async () => {
  const dir = await tempDir();
  mkdirSync(dir + '/data');
  const e = await Engine.create({ dataDir: dir + '/data', tempDir: dir + '/tmp', threads: 2, connections: 1, memoryLimit: '500MB' });
  const { connection: c, release } = await e.acquire();
  const run = async (label: string, s: string) => { try { const r = await c.runAndReadAll(s); console.log(label, 'OK', r.getRows()); } catch (err) { console.log(label, 'ERR', (err as Error).message.split('\n')[0]); } };
  c.interrupt();
  await run('after idle interrupt', 'SELECT 42');
  await run('after idle interrupt 2', 'SELECT 43');
  // interrupt mid-stream, lazily computed
  const s = await c.stream('SELECT i FROM range(10000000000) t(i) WHERE i % 7 = 0');
  const ch = await s.fetchChunk(); console.log('chunk', ch?.rowCount);
  c.interrupt();
  let total = 0; let n = 0;
  try { for (let k; (k = await s.fetchChunk()) && k.rowCount > 0 && n < 1000; n++) total += k.rowCount; console.log('after interrupt total', total, n); } catch (err) { console.log('stream err', (err as Error).message); }
  await run('after stream interrupt', 'SELECT 44');
  // runAndReadAll with timing before start
  const t0 = Date.now();
  const p = c.runAndReadAll('SELECT sum(i) FROM range(100000000000) t(i)');
  setTimeout(() => c.interrupt(), 100);
  try { await p; console.log('long finished?') } catch (err) { console.log('long err', (err as Error).message, Date.now()-t0); }
  await run('after long', 'SELECT sum(i) FROM range(1000) t(i)');
  // stream a long one, interrupt before first fetch
  const s2 = await c.stream('SELECT sum(i) FROM range(100000000000) t(i)');
  setTimeout(() => c.interrupt(), 100);
  try { const k = await s2.fetchChunk(); console.log('s2 chunk', k?.rowCount, k?.getColumnValues(0)); } catch (err) { console.log('s2 err', (err as Error).message); }
  await run('after s2', 'SELECT sum(i) FROM range(1000) t(i)');
  release(); e.close();
});
