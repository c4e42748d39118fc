import { readFileSync } from 'node:fs';

export interface TextSink {
  write(text: string): unknown;
}

/** Where the commands talk: the process's streams in the CLI, buffers in tests. */
export interface ClientIo {
  stdout: TextSink;
  stderr: TextSink;
  /** Progress is drawn only on a terminal; logs and pipes stay quiet. */
  stderrIsTTY: boolean;
}

export const processIo = (): ClientIo => ({ stdout: process.stdout, stderr: process.stderr, stderrIsTTY: process.stderr.isTTY === true });

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const TOOL = { name: 'fire-api', version: packageVersion() };

export const USER_AGENT = `${TOOL.name}/${TOOL.version}`;
