// The command itself, in TypeScript, loaded through tsx once bin/fire-api.js has prepared the process.
// Two programs share the command: the extract/verify client (client/) and the operator's commands,
// serving included (ops/cli.ts).
import { register } from 'tsx/esm/api';

register();
const command = process.argv[2];
if (command === 'extract' || command === 'verify') await (await import('../client/cli.ts')).clientMain(process.argv.slice(2));
else await import('../ops/cli.ts');
