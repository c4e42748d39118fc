import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const IMPORT = /(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));

/** Relative imports (type-only ones too) of every file, by file. */
function importGraph(dirs: string[]): Map<string, string[]> {
  const files = dirs.flatMap((d) => tsFiles(path.join(ROOT, d)));
  const known = new Set(files);
  return new Map(files.map((f) => [f, [...readFileSync(f, 'utf8').matchAll(IMPORT)].map((m) => path.resolve(path.dirname(f), m[1]!)).filter((t) => known.has(t))]));
}

/** One import circle per file it is found from, as relative paths. */
function circles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 'open') found.push([...stack.slice(stack.indexOf(t)), t].map((x) => path.relative(ROOT, x)).join(' -> '));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe('module structure', () => {
  it('has no import circle in queries/ and server/ (a type two files share lives in a leaf module)', () => {
    const graph = importGraph(['queries', 'server']);
    expect(graph.size).toBeGreaterThan(50);
    expect(circles(graph)).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const graph = new Map([['/a.ts', ['/b.ts']], ['/b.ts', ['/c.ts']], ['/c.ts', ['/a.ts']]]);
    expect(circles(graph)).toHaveLength(1);
  });
});
