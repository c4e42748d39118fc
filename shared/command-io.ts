/** What every `fire-api` command (the client's and the operator's) uses to talk, to parse its arguments and to fail on usage. */

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

/** The parsed options, or the exit code after --help (0) or a usage error (2), each printed with the usage text. */
export function parseCommandArgs<T>(io: ClientIo, command: string, usage: string, args: string[], parse: () => T): T | number {
  if (args.includes('--help') || args.includes('-h')) return io.stdout.write(usage), 0;
  try {
    return parse();
  } catch (e) {
    if (!isArgsError(e)) throw e;
    io.stderr.write(`fire-api ${command}: ${e.message}\n\n${usage}`);
    return 2;
  }
}
