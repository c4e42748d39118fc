import { accessSync, constants } from 'node:fs';
import path from 'node:path';

// Finding the Debian programs a bench or a test drives (Chromium, redis-server, nginx): one lookup for both.

export function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first of `names` found as an executable on PATH. */
export function findOnPath(names: readonly string[], searchPath = process.env.PATH ?? ''): string | null {
  for (const name of names) {
    for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
      const file = path.join(dir, name);
      if (executable(file)) return file;
    }
  }
  return null;
}

/** `CHROMIUM_PATH` if set (it must then exist), else the names Debian, Ubuntu and Google use; null when none is installed. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const chosen = env.CHROMIUM_PATH;
  if (chosen) return executable(chosen) ? chosen : null;
  return findOnPath(['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'], env.PATH);
}
