import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Which top-level rooms each room may import from (besides itself): dependencies point one way. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  datasets: [],
  shared: [],
  queries: ['datasets', 'shared'],
  server: ['queries', 'datasets', 'shared'],
  demo: ['queries', 'datasets', 'shared'],
  ops: ['server', 'queries', 'datasets', 'demo', 'shared'],
  client: ['shared'],
  bench: ['ops', 'server', 'queries', 'datasets', 'demo', 'shared', 'client'],
  bin: ['ops', 'client'],
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : Promise.resolve(/\.(ts|mjs|cjs)$/.test(e.name) ? [path.join(dir, e.name)] : []))),
  );
  return nested.flat();
}

/** Relative module imports (static and dynamic) of every source file outside test/; a child process's script named by URL is not an import. */
async function importGraph(): Promise<Map<string, string[]>> {
  const files = (await Promise.all(Object.keys(MAY_IMPORT).map(sourceFiles))).flat();
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = await readFile(path.join(ROOT, file), 'utf8');
    const specs = [...text.matchAll(/(?:from|import\(?)\s*'(\.\.?\/[^']+)'/g)].map((m) => m[1]!);
    graph.set(file, specs.map((s) => path.join(path.dirname(file), s)));
  }
  return graph;
}

/** Every cycle's members (strongly connected components of more than one file, or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The rooms inside queries/, bottom up, and which of them each may import: the shared rooms import
 * nothing above them; a capability (extract/, aggregate/, renderings/) imports the shared rooms
 * and never a sibling, except that extracts are served from renderings. Top-level files of
 * queries/ are rooms of their own (errors, instant and window are the leaves everything uses).
 */
const LEAVES = ['queries/errors.ts', 'queries/instant.ts', 'queries/window.ts'];
const QUERY_ROOMS: Record<string, readonly string[]> = {
  'queries/sql': [...LEAVES],
  'queries/exact': [],
  'queries/engine': [...LEAVES, 'queries/sql'],
  'queries/encode': [...LEAVES, 'queries/sql', 'queries/engine'],
  'queries/formats.ts': [...LEAVES, 'queries/sql', 'queries/encode'],
  'queries/files': [...LEAVES, 'queries/sql', 'queries/exact', 'queries/engine'],
  'queries/sources': [...LEAVES, 'queries/sql', 'queries/engine', 'queries/files', 'queries/formats.ts'],
  'queries/renderings': [...LEAVES, 'queries/sql', 'queries/engine', 'queries/encode', 'queries/files', 'queries/sources', 'queries/formats.ts'],
  'queries/aggregate': [...LEAVES, 'queries/sql', 'queries/exact', 'queries/engine', 'queries/encode', 'queries/files', 'queries/sources', 'queries/formats.ts'],
  'queries/extract': [...LEAVES, 'queries/sql', 'queries/engine', 'queries/encode', 'queries/files', 'queries/sources', 'queries/formats.ts', 'queries/renderings'],
};
for (const leaf of LEAVES) QUERY_ROOMS[leaf] = LEAVES.filter((l) => l !== leaf);

const roomOf = (file: string) => file.split(path.sep)[0]!;
/** A file's room inside queries/: its folder under queries/, or the file itself at the top. */
const queryRoomOf = (file: string) => file.split(path.sep).slice(0, 2).join('/');
/** Most source files a folder holds: past this it holds two things (name them and split). */
const MAX_FILES_A_FOLDER = 16;

describe('the layout: rooms with one-way doors', () => {
  it('every relative import resolves to a file, and no room imports against the direction of its dependencies', async () => {
    const graph = await importGraph();
    expect(graph.size).toBeGreaterThan(150);
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        expect(graph.has(target), `${file} imports ${target}`).toBe(true);
        const [from, to] = [roomOf(file), roomOf(target)];
        if (from !== to && !MAY_IMPORT[from]!.includes(to)) wrong.push(`${file} -> ${target}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('inside queries/, the shared rooms import nothing above them and no capability imports a sibling', async () => {
    const graph = await importGraph();
    const rooms = new Set([...graph.keys()].filter((f) => roomOf(f) === 'queries').map(queryRoomOf));
    expect([...rooms].sort()).toEqual(Object.keys(QUERY_ROOMS).sort());
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      if (roomOf(file) !== 'queries') continue;
      for (const target of targets) {
        const [from, to] = [queryRoomOf(file), queryRoomOf(target)];
        if (roomOf(target) === 'queries' && from !== to && !QUERY_ROOMS[from]!.includes(to)) wrong.push(`${file} -> ${target}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it(`no folder holds more than ${MAX_FILES_A_FOLDER} files`, async () => {
    const graph = await importGraph();
    const counts = new Map<string, number>();
    for (const file of graph.keys()) counts.set(path.dirname(file), (counts.get(path.dirname(file)) ?? 0) + 1);
    expect(counts.size).toBeGreaterThan(20);
    const crowded = [...counts].filter(([, n]) => n > MAX_FILES_A_FOLDER).map(([dir, n]) => `${dir}: ${n}`);
    expect(crowded).toEqual([]);
  });

  it('has no import circle outside the tests', async () => {
    expect(cycles(await importGraph())).toEqual([]);
  });

  it('the cycle finder sees a circle when there is one (so the test above can fail)', () => {
    const graph = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
