import { readFileSync } from 'node:fs';

export { processIo, type ClientIo, type TextSink } from '../shared/command-io.ts';

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
