import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { chromiumPath, executable, findOnPath } from '../../bench/lib/programs.ts';

/**
 * A Debian program some tests need (a real redis-server, nginx, Chromium). Outside CI a missing one
 * skips those tests with a note the summary reporter lists; in CI (`CI=true`) it fails them, so CI
 * keeps running everything.
 */
export interface Service {
  name: string;
  /** The Debian package that provides it. */
  debianPackage: string;
  /** Absolute path of the program, or null when it is not installed. */
  path: string | null;
}

export { findOnPath };

const SKIP_NOTE = /^needs (\S+) \(apt-get install (\S+)\)$/;

export function redisServer(): Service {
  return { name: 'redis-server', debianPackage: 'redis-server', path: findOnPath(['redis-server']) };
}

/** Debian installs its daemons in /usr/sbin, which is not on an ordinary user's PATH. */
const withSbin = (searchPath: string | undefined) => [searchPath ?? '', '/usr/sbin', '/sbin'].filter(Boolean).join(path.delimiter);

export function nginx(env: NodeJS.ProcessEnv = process.env): Service {
  return { name: 'nginx', debianPackage: 'nginx', path: findOnPath(['nginx'], withSbin(env.PATH)) };
}

/** Checks the shipped systemd unit without running systemd (`verify`, `security --offline`). */
export function systemdAnalyze(env: NodeJS.ProcessEnv = process.env): Service {
  return { name: 'systemd-analyze', debianPackage: 'systemd', path: findOnPath(['systemd-analyze'], env.PATH) };
}

/** `CHROMIUM_PATH` if set (it must then exist), else the names Debian, Ubuntu and Google use. */
export function chromium(env: NodeJS.ProcessEnv = process.env): Service {
  return { name: 'chromium', debianPackage: 'chromium', path: chromiumPath(env) };
}

export function curl(env: NodeJS.ProcessEnv = process.env): Service {
  return { name: 'curl', debianPackage: 'curl', path: findOnPath(['curl'], env.PATH) };
}

/** Debian's own Python (the standard library is all the tests use). */
export function python3(env: NodeJS.ProcessEnv = process.env): Service {
  return { name: 'python3', debianPackage: 'python3', path: findOnPath(['python3'], env.PATH) };
}

/** GDAL's command-line programs (ogrinfo, ogr2ogr): how GIS tools and R/Python through GDAL read the API. */
export function gdal(env: NodeJS.ProcessEnv = process.env): Service {
  return { name: 'ogrinfo', debianPackage: 'gdal-bin', path: findOnPath(['ogrinfo'], env.PATH) };
}

/** Whether `python` runs and imports qgis.core: a program that merely exists is not QGIS's Python. */
function importsQgis(python: string): boolean {
  if (!executable(python)) return false;
  try {
    // Said back, not only exit 0: any program may exit 0 whatever it is asked.
    const said = execFileSync(python, ['-c', 'import qgis.core; print("qgis " + qgis.core.Qgis.version())'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000, env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } });
    return said.startsWith('qgis ');
  } catch {
    return false;
  }
}

/**
 * Debian's QGIS Python bindings (python3-qgis, which brings the providers, OAPIF among them), run
 * by Debian's own Python: `QGIS_PYTHON` if set, else /usr/bin/python3; either must import qgis.
 */
export function qgisPython(env: NodeJS.ProcessEnv = process.env): Service {
  const python = env.QGIS_PYTHON ?? '/usr/bin/python3';
  return { name: 'python3-qgis', debianPackage: 'python3-qgis', path: importsQgis(python) ? python : null };
}

export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = (env.CI ?? '').toLowerCase();
  return ci !== '' && ci !== '0' && ci !== 'false';
}

export function skipNote(service: Service): string {
  return `needs ${service.name} (apt-get install ${service.debianPackage})`;
}

/** Reads a note written by `skipNote` back: the service and its package, or null for any other note. */
export function parseSkipNote(note: string | undefined): { name: string; debianPackage: string } | null {
  const m = SKIP_NOTE.exec(note ?? '');
  return m ? { name: m[1]!, debianPackage: m[2]! } : null;
}

/**
 * Call first in a test that needs `service`: returns its path when installed; otherwise skips the
 * test with a note (outside CI) or throws naming the missing service (CI).
 */
export function needService(ctx: { skip: (note?: string) => never }, service: Service, env: NodeJS.ProcessEnv = process.env): string {
  if (service.path) return service.path;
  if (isCi(env)) throw new Error(`${service.name} is not installed, and CI runs every test: apt-get install ${service.debianPackage}`);
  return ctx.skip(skipNote(service));
}
