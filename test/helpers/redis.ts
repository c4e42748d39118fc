import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from '../../bench/server-process.ts';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => (c.end(), resolve(true)));
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not listen on ${port}`);
}

/**
 * A real, throw-away redis-server (`program`: its path, see `redisServer()` in services.ts); give
 * `port` to start it again where a stopped one listened.
 */
export async function startRedis(program: string, port?: number): Promise<RedisServer> {
  port ??= await freePort();
  const child: ChildProcess = spawn(program, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`cannot start ${program}: ${e.message}`)));
    waitForPort(port, 5000).then(resolve, reject);
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}
