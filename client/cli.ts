import { extractCommand } from './extract.ts';
import { verifyCommand } from './verify.ts';

/** `fire-api extract|verify ...`: the client program, which speaks to the service over HTTP only. */
export async function clientMain(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const run = command === 'extract' ? extractCommand : verifyCommand;
  try {
    process.exitCode = await run(rest, process.env);
  } catch (e) {
    process.stderr.write(`fire-api: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  }
}
