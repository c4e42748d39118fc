import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ownChild } from './children.ts';
import { REPO_ROOT } from '../lib/options.ts';

export interface ServerProcess {
  pid: number;
  baseUrl: string;
  /** Headers every data request carries (the bench's key). */
  requestHeaders: Record<string, string>;
  /** Set once the child has exited, for whatever reason. */
  exited: { code: number | null; signal: string | null } | null;
  /** The last lines the child wrote (LOG_LEVEL=warn keeps this to warnings and errors). */
  outputTail(): string;
  /** Throws if the child is gone: a run against a dead server must not be reported as a figure. */
  assertAlive(): void;
  /** SIGTERM (the server's own clean shutdown, which is also when --cpu-prof writes), SIGKILL after the grace time. */
  stop(graceMs?: number): Promise<void>;
}

/** A port nobody listens on right now; the child binds it a moment later. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function keepTail(child: ChildProcess, lines: string[]): void {
  const take = (data: Buffer) => {
    lines.push(...data.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
}

async function waitForHealth(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    server.assertAlive();
    const ok = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not answer /healthz within ${timeoutMs} ms\n${server.outputTail()}`);
}

/** Node's flags as the shipped systemd unit and `npm start` run the server (test/meta/node-flags.test.ts keeps them equal). */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * The environment the shipped systemd unit and `npm start` add (the same test keeps them equal):
 * glibc's malloc keeps an arena per thread that allocates (DuckDB's own threads use its jemalloc),
 * memory freed in one rarely goes back. The bench's environment comes after, so a probe can set it otherwise.
 */
export const SERVER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * The real server, `node bin/fire-api.js serve` with SERVER_NODE_FLAGS, as a child process configured
 * only through its environment, `parentEnv` included: `npm run bench` sets COMPILED_DIR=dist, so its
 * servers run the compiled tree as production does (a bench script run directly runs the sources).
 */
export async function startServer(
  env: Record<string, string>,
  requestHeaders: Record<string, string>,
  nodeArgs: readonly string[] = [],
  parentEnv: NodeJS.ProcessEnv = process.env,
  /** The tree whose server runs (another checkout for bench:answers). */
  tree: string = REPO_ROOT,
): Promise<ServerProcess> {
  const port = Number(env.PORT);
  const child = ownChild(
    spawn(process.execPath, [...SERVER_NODE_FLAGS, ...nodeArgs, 'bin/fire-api.js', 'serve'], {
      cwd: tree,
      env: { ...SERVER_ENV, ...parentEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  if (child.pid === undefined) throw new Error('could not start the server process');
  const lines: string[] = [];
  keepTail(child, lines);
  const exitedPromise = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: ServerProcess = {
    pid: child.pid,
    baseUrl: `http://127.0.0.1:${port}`,
    requestHeaders,
    exited: null,
    outputTail: () => lines.join('\n'),
    assertAlive: () => {
      if (server.exited) throw new Error(`server exited (code ${server.exited.code}, signal ${server.exited.signal})\n${server.outputTail()}`);
    },
    stop: async (graceMs = 10_000) => {
      if (server.exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
  child.once('exit', (code, signal) => (server.exited = { code, signal }));
  try {
    await waitForHealth(server, 60_000);
  } catch (e) {
    await server.stop(1000);
    throw e;
  }
  return server;
}
