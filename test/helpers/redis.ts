import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from '../../bench/server/server-process.ts';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** SIGSTOP: alive, connections open, nothing answered; what clients send meanwhile waits in its sockets. */
  pause(): void;
  /** SIGCONT: Redis then runs everything sent to it during the pause. */
  resume(): void;
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
  const signal = (s: NodeJS.Signals) => {
    if (!child.kill(s)) throw new Error(`redis-server did not take ${s}`);
  };
  return { url: `redis://127.0.0.1:${port}`, port, stop, pause: () => signal('SIGSTOP'), resume: () => signal('SIGCONT') };
}

export interface SlowLink {
  url: string;
  /** Delay added to everything Redis sends back (order kept); what clients send passes at once. */
  replyDelayMs: number;
  close(): Promise<void>;
}

/** A real TCP relay in front of `redis` whose answers can be held back, like a congested return path. */
export async function slowLink(redis: RedisServer): Promise<SlowLink> {
  const sockets = new Set<net.Socket>();
  const link = { replyDelayMs: 0 } as SlowLink;
  const relay = net.createServer((client) => {
    const upstream = net.connect(redis.port, '127.0.0.1');
    let lastRelease = 0;
    upstream.on('data', (chunk: Buffer) => {
      // Never before an earlier chunk, so the stream stays in order when the delay shrinks.
      lastRelease = Math.max(Date.now() + link.replyDelayMs, lastRelease);
      setTimeout(() => client.write(chunk), lastRelease - Date.now());
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(a);
      a.on('close', () => (sockets.delete(a), b.destroy()));
      a.on('error', () => undefined);
    }
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  link.url = `redis://127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
  link.close = () => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => relay.close(() => resolve()));
  };
  return link;
}
