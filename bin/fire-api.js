#!/usr/bin/env node
// Runs the TypeScript sources directly: no build step between a checkout and a working command.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
