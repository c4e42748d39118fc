// The command itself, in TypeScript, loaded through tsx once bin/fire-api.js has prepared the process.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
