import { afterAll, beforeAll, vi } from 'vitest';

// The shared files of a worker run in one process, one after another (vitest.config.ts): a file must
// leave nothing the next one could see. Checked after each file's own afterAll hooks.
let env: Record<string, string | undefined> = {};
let servers = 0;
const listening = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

beforeAll(() => {
  env = { ...process.env };
  servers = listening();
});

afterAll(async () => {
  // A server closed in the file's own afterAll leaves its handle until the loop's close phase.
  for (let turn = 0; turn < 100 && listening() > servers; turn++) await new Promise((r) => setTimeout(r, 10));
  const changed = [...new Set([...Object.keys(env), ...Object.keys(process.env)])].filter((k) => env[k] !== process.env[k]);
  const left: string[] = [];
  if (changed.length > 0) left.push(`environment changed: ${changed.join(', ')}`);
  if (vi.isFakeTimers()) left.push('fake timers still on');
  if (listening() > servers) left.push(`${listening() - servers} server(s) still listening`);
  if (left.length > 0) throw new Error(`this file leaves behind what the next file of its worker would see: ${left.join('; ')}`);
});
