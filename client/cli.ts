import { EXTRACT_FAILED, extractCommand } from './extract.ts';
import { COULD_NOT_VERIFY, verifyCommand } from './verify/verify.ts';

/** `fire-api extract|verify ...`: the client program, which speaks to the service over HTTP only. */
export async function clientMain(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const run = command === 'extract' ? extractCommand : verifyCommand;
  // A fault of the program is a failure of its own kind: for verify never 1, "something changed".
  const crashed = command === 'extract' ? EXTRACT_FAILED : COULD_NOT_VERIFY;
  try {
    process.exitCode = await run(rest, process.env);
  } catch (e) {
    process.stderr.write(`fire-api: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = crashed;
  }
}
