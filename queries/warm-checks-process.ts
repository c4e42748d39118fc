// The warm-up child process (see warmChecksInChild): argv DATA_DIR TEMP_DIR; verdicts go to the parent over IPC.
import { DATASETS } from '../datasets/index.ts';
import { Engine } from './engine.ts';
import { FileChecker } from './file-check.ts';
import { checkAllFiles } from './warm-checks.ts';

const [dataDir, tempDir] = process.argv.slice(2);
if (!dataDir || !tempDir || !process.send) throw new Error('usage: warm-checks-process DATA_DIR TEMP_DIR (as a child process with IPC)');
// Ctrl-C reaches the whole process group: the server stops this process itself when it closes.
process.on('SIGINT', () => undefined);
const send = (m: unknown) => new Promise<void>((resolve, reject) => process.send!(m, undefined, {}, (e) => (e ? reject(e) : resolve())));
const engine = await Engine.create({ dataDir, tempDir, threads: 1, connections: 1, memoryLimit: '1GB', maxQueued: 0 });
try {
  const pending: Promise<void>[] = [];
  const forward = (m: unknown) => void pending.push(send(m));
  const checked = await checkAllFiles(engine, new FileChecker(dataDir), dataDir, DATASETS, forward, forward);
  await Promise.all(pending);
  // Every verdict is handed over before the channel closes.
  await send({ done: checked });
} finally {
  engine.close();
  process.disconnect();
}
