/** What every `fire-api` command (the client's and the operator's) uses to talk and to fail on usage. */

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

/** Bad command line: printed with the usage text, exit code 2. */
export class UsageError extends Error {}

/** node:util parseArgs reports unknown options with ERR_PARSE_ARGS_* codes. */
export const isArgsError = (e: unknown): e is Error =>
  e instanceof UsageError || String((e as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS');
