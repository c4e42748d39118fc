import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../../bench/server/server-process.ts';
import { tempDir } from '../helpers/fixtures.ts';

export const SHIPPED_CONF = path.resolve(import.meta.dirname, '../../deploy/nginx/fire-api.conf');

/** The node addresses, listen line and log path as they stand in the shipped file. */
const SHIPPED_NODES = ['10.0.0.11:8080', '10.0.0.12:8080'];
const SHIPPED_LISTEN = 'listen 80;';
const SHIPPED_LOG = '/var/log/nginx/fire-api.access.log';

export interface Nginx {
  url: string;
  /** The access log (one line per request, written when it ends). */
  accessLog: string;
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`the shipped nginx config no longer holds exactly one "${from}": update the test's template`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** The shipped file with only its node addresses, listen port and log path replaced. */
export async function shippedConfig(nodes: readonly string[], port: number, accessLog: string): Promise<string> {
  let text = await readFile(SHIPPED_CONF, 'utf8');
  SHIPPED_NODES.forEach((address, i) => (text = replaceOnce(text, `server ${address} `, `server ${nodes[i]!} `)));
  text = replaceOnce(text, SHIPPED_LISTEN, `listen 127.0.0.1:${port};`);
  return replaceOnce(text, SHIPPED_LOG, accessLog);
}

/**
 * What an operator writes first: proxy_pass with streaming turned on and connection failures
 * retried, everything else nginx's defaults (HTTP/1.0 to the nodes, a new connection each time).
 */
export function defaultsConfig(nodes: readonly string[], port: number, accessLog: string): string {
  return `upstream fire_api {
${nodes.map((n) => `    server ${n};`).join('\n')}
}
server {
    listen 127.0.0.1:${port};
    access_log ${accessLog};
    location / {
        proxy_pass http://fire_api;
        proxy_buffering off;
        proxy_next_upstream error timeout;
    }
}
`;
}

/** The main context Debian's nginx.conf would give, with every path inside `prefix`. */
function mainConfig(prefix: string, site: string): string {
  const p = (name: string) => path.join(prefix, name);
  return `pid ${p('nginx.pid')};
error_log ${p('error.log')} info;
worker_processes 1;
events { worker_connections 256; }
http {
    client_body_temp_path ${p('client_body')};
    proxy_temp_path ${p('proxy')};
    fastcgi_temp_path ${p('fastcgi')};
    uwsgi_temp_path ${p('uwsgi')};
    scgi_temp_path ${p('scgi')};
    default_type application/octet-stream;
    include ${site};
}
`;
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`nginx exited with code ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => (c.end(), resolve(true)));
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen on ${port}`);
}

/**
 * nginx as this process's own child: its own prefix, config, pid and logs in a temporary folder,
 * in the foreground (`daemon off`), never the system's service. `site` builds the http-level file.
 */
export async function startNginx(program: string, site: (port: number, accessLog: string) => Promise<string> | string): Promise<Nginx> {
  const prefix = await tempDir('fire-api-nginx-');
  await mkdir(path.join(prefix, 'logs'));
  const port = await freePort();
  const accessLog = path.join(prefix, 'access.log');
  const sitePath = path.join(prefix, 'fire-api.conf');
  await writeFile(sitePath, await site(port, accessLog));
  await writeFile(path.join(prefix, 'nginx.conf'), mainConfig(prefix, sitePath));
  const args = ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', path.join(prefix, 'error.log'), '-g', 'daemon off;'];
  let output = '';
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const errorLog = () => readFile(path.join(prefix, 'error.log'), 'utf8').catch(() => '');
  try {
    await waitForPort(port, child, 10_000);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}\n${output}\n${await errorLog()}`);
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      // SIGTERM: nginx's fast shutdown, its workers included.
      child.kill('SIGTERM');
    });
  return { url: `http://127.0.0.1:${port}`, accessLog, errorLog, stop };
}
