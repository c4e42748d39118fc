import type { ChildProcess } from 'node:child_process';

const alive = new Set<ChildProcess>();
let installed = false;

function killAll(signal: NodeJS.Signals): void {
  for (const child of alive) child.kill(signal);
}

/**
 * A bench stopped by Ctrl-C, SIGTERM, a closed terminal or an uncaught error takes its children
 * with it: a server left behind would hold its port, its memory and its DuckDB threads, and skew
 * the next run's figures. (Nothing can help against SIGKILL of the bench itself.)
 */
function install(): void {
  installed = true;
  process.once('exit', () => killAll('SIGKILL'));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll('SIGTERM');
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
  }
}

/** Ties a child's life to the bench's: it is signalled when the bench ends, however it ends. */
export function ownChild<T extends ChildProcess>(child: T): T {
  if (!installed) install();
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  return child;
}
