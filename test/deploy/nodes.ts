import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/http.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const SHIPPED_UNIT = path.join(ROOT, 'deploy/systemd/fire-api@.service');
export const SHIPPED_ENV = path.join(ROOT, 'deploy/systemd/fire-api.env');
const SHIPPED_EXEC = '/usr/bin/node --max-semi-space-size=2 /opt/fire-api/bin/fire-api.js serve';

/** This machine's stand-ins for the shipped paths and addresses. */
export interface Site {
  dataDir: string;
  keysFile: string;
  redisUrl: string;
  /** Replaces `/var/cache` (the unit's TEMP_DIR is `/var/cache/fire-api/%i`). */
  cacheDir: string;
  /** Replaces the unit's `COMPILED_DIR=dist`: a tree test/helpers/compiled-tree.ts built, or '' for the sources. */
  compiledDir: string;
}

/** `KEY=VALUE` lines of a systemd environment file or of `Environment=` settings. */
function assignments(lines: readonly string[]): Record<string, string> {
  const pairs = lines.filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
  return Object.fromEntries(pairs);
}

/** The values of every `name=` setting of the unit's [Service] section, in order. */
export async function unitSettings(name: string): Promise<string[]> {
  const text = await readFile(SHIPPED_UNIT, 'utf8');
  const service = text.slice(text.indexOf('[Service]'), text.indexOf('[Install]'));
  return service.split('\n').filter((l) => l.startsWith(`${name}=`)).map((l) => l.slice(name.length + 1));
}

/**
 * The environment systemd gives instance `port` of the shipped unit: the environment file first,
 * then the unit's `Environment=` (the file's values win, as in systemd), with the shipped paths and
 * addresses replaced by this machine's.
 */
export async function unitEnvironment(port: number, site: Site): Promise<Record<string, string>> {
  const file = assignments((await readFile(SHIPPED_ENV, 'utf8')).split('\n'));
  const unit = assignments((await unitSettings('Environment')).map((l) => l.replaceAll('%i', String(port))));
  const env: Record<string, string> = { ...unit, ...file };
  const expected = { DATA_DIR: '/srv/fire-api/data', KEYS_FILE: '/srv/fire-api/keys.json', REDIS_URL: 'redis://10.0.0.10:6379', HOST: '0.0.0.0', PORT: String(port), COMPILED_DIR: 'dist' };
  for (const [name, value] of Object.entries(expected)) {
    if (env[name] !== value) throw new Error(`the shipped unit and environment file give ${name}=${env[name]}, the test expects ${value}: update the test`);
  }
  const local = { DATA_DIR: site.dataDir, KEYS_FILE: site.keysFile, REDIS_URL: site.redisUrl, HOST: '127.0.0.1', TEMP_DIR: env.TEMP_DIR!.replace('/var/cache', site.cacheDir), COMPILED_DIR: site.compiledDir };
  return { ...env, ...local };
}

/** The unit's ExecStart as this checkout runs it: this Node with the unit's flags, this repository's bin/fire-api.js. */
export async function unitCommand(): Promise<string[]> {
  const [exec] = await unitSettings('ExecStart');
  if (exec !== SHIPPED_EXEC) throw new Error(`the shipped unit runs "${exec}", the test expects "${SHIPPED_EXEC}": update the test`);
  return [process.execPath, '--max-semi-space-size=2', path.join(ROOT, 'bin/fire-api.js'), 'serve'];
}

interface LogLine {
  msg?: string;
  reqId?: string;
  req?: { path?: string };
}

/** One `fire-api serve` process, its log read as it comes. */
export class Node {
  private child: ChildProcess | null = null;
  private lines: LogLine[] = [];
  /** stdout after its last complete line. */
  private pending = '';
  /** The last of what it wrote, for the message when it does not start. */
  private output = '';

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const [program, ...args] = await unitCommand();
    this.lines = [];
    this.pending = '';
    this.output = '';
    const child = spawn(program!, args, { cwd: ROOT, env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout!.setEncoding('utf8').on('data', (text: string) => this.take(text));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => this.keep(text));
    const listening = () => this.lines.some((l) => String(l.msg).startsWith('Server listening at'));
    if (!(await waitFor(() => listening() || !this.running, 30_000)) || !listening()) throw new Error(`${this.name} did not start:\n${this.output}`);
  }

  /** Whether this node has logged a line with message `msg` since it started. */
  logged(msg: string): boolean {
    return this.lines.some((l) => l.msg === msg);
  }

  /** Data requests this node has logged as arrived and not yet completed. */
  openDataRequests(): number {
    const open = new Set<string>();
    for (const l of this.lines) {
      if (l.msg === 'incoming request' && l.req?.path?.startsWith('/api/v1/') && l.reqId) open.add(l.reqId);
      else if (l.msg === 'request completed' && l.reqId) open.delete(l.reqId);
    }
    return open.size;
  }

  /** Data requests this node has logged as arrived since it started. */
  dataRequests(): number {
    return this.lines.filter((l) => l.msg === 'incoming request' && l.req?.path?.startsWith('/api/v1/')).length;
  }

  /** SIGKILL, sent before this returns (the machine lost, no drain); resolves once the process and its log are closed. */
  kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return Promise.resolve();
    const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.kill('SIGKILL');
    return gone;
  }

  /** SIGTERM, as systemd stops the unit: the server drains and exits; resolves with how it ended. */
  terminate(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const child = this.child;
    if (!child || !this.running) return Promise.reject(new Error(`${this.name} is not running`));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    child.kill('SIGTERM');
    return ended;
  }

  private keep(text: string): void {
    this.output = (this.output + text).slice(-20_000);
  }

  private take(chunk: string): void {
    this.keep(chunk);
    this.pending += chunk;
    const end = this.pending.lastIndexOf('\n');
    if (end < 0) return;
    for (const line of this.pending.slice(0, end).split('\n')) {
      if (line.startsWith('{')) this.lines.push(JSON.parse(line) as LogLine);
    }
    this.pending = this.pending.slice(end + 1);
  }
}
