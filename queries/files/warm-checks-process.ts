// The file check child process (see checkInChild): argv DATA_DIR TEMP_DIR; the files to check arrive
// in the first IPC message, verdicts go back to the parent.
import { Engine } from '../engine/engine.ts';
import { FileChecker } from './check.ts';
import { checkFiles, type FileToCheck } from './warm-checks.ts';

const [dataDir, tempDir] = process.argv.slice(2);
if (!dataDir || !tempDir || !process.send) throw new Error('usage: warm-checks-process DATA_DIR TEMP_DIR (as a child process with IPC)');
// Ctrl-C reaches the whole process group: the server stops this process itself when it closes.
process.on('SIGINT', () => undefined);
const send = (m: unknown) => new Promise<void>((resolve, reject) => process.send!(m, undefined, {}, (e) => (e ? reject(e) : resolve())));
const received = new Promise<FileToCheck[]>((resolve) => process.once('message', (m: { files: FileToCheck[] }) => resolve(m.files)));
// Asked for once listening: a message sent before a listener exists would be lost.
await send({ ready: true });
const files = await received;
const engine = await Engine.create({ dataDir, tempDir, threads: 1, connections: 1, memoryLimit: '1GB', maxQueued: 0 });
try {
  const pending: Promise<void>[] = [];
  const checked = await checkFiles(engine, new FileChecker(dataDir), files, (m) => void pending.push(send(m)));
  await Promise.all(pending);
  // Every verdict is handed over before the channel closes.
  await send({ done: checked });
} finally {
  engine.close();
  process.disconnect();
}
