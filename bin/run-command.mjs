// The command itself, loaded once bin/fire-api.js has prepared the process: from the compiled tree
// in `tree` (checked against the sources), or from the TypeScript sources through tsx.
// Two programs share the command: the extract/verify client (client/) and the operator's commands,
// serving included (ops/cli.ts).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SOURCES = fileURLToPath(new URL('..', import.meta.url));

/** Runs the command of process.argv from `tree`, or from the sources when it is null. */
export async function runCommand(tree) {
  if (!tree) (await import('tsx/esm/api')).register();
  const load = (module) => import(pathToFileURL(path.join(tree ?? SOURCES, `${module}${tree ? '.js' : '.ts'}`)).href);
  const command = process.argv[2];
  if (command === 'extract' || command === 'verify') await (await load('client/cli')).clientMain(process.argv.slice(2));
  else await load('ops/cli');
}
