import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let doc: { paths: Record<string, Record<string, unknown>> };
beforeAll(async () => {
  server = await startServer(await writeSampleData());
  doc = (await (await fetch(`${server.url}/api/v1/docs`)).json()) as typeof doc;
});
afterAll(() => server.close());

const LINE = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?$/;

/** `METHOD /path/{param}` for every route the app registered, read from Fastify's own route tree. */
function registeredRoutes(tree: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n').filter(Boolean)) {
    const m = LINE.exec(line);
    if (!m) throw new Error(`unexpected route tree line: ${line}`);
    const depth = m[1]!.length / 4;
    const path = (stack[depth - 1] ?? '') + m[2]!;
    stack[depth] = path;
    for (const method of m[3]?.split(', ') ?? []) routes.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
  }
  return routes.sort();
}

/** Every documented operation, with the HEAD that Fastify adds to each GET. */
const documentedRoutes = (): string[] =>
  Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(k)).flatMap((m) => (m === 'get' ? [`GET ${path}`, `HEAD ${path}`] : [`${m.toUpperCase()} ${path}`])))
    .sort();

/** CORS preflights answer for every path under /api/v1 (Fastify prints the wildcard route as `*`): the browser's protocol, not an operation of the API. */
const isCorsPreflight = (route: string) => /^OPTIONS (\/api\/v1\/)?\*$/.test(route);

it('every route the app serves is in the document (but the CORS preflight), and every documented operation is served', () => {
  const registered = registeredRoutes(server.app.printRoutes({ commonPrefix: false }));
  expect(registered.filter(isCorsPreflight)).toHaveLength(1);
  const operations = registered.filter((r) => !isCorsPreflight(r));
  expect(operations.length).toBeGreaterThanOrEqual(20);
  expect(operations).toEqual(documentedRoutes());
});

it('documents the five data endpoints, the contract itself and the operating endpoints', () => {
  expect(Object.keys(doc.paths)).toEqual(
    expect.arrayContaining(['/api/v1/hotspots', '/api/v1/burnt-areas', '/api/v1/fire-danger', '/api/v1/sensor-stations', '/api/v1/sensor-readings', '/api/v1/docs', '/healthz', '/readyz', '/metrics']),
  );
});

it('the route-tree reader sees nested routes, so a route added under another cannot hide', () => {
  const tree = '├── /api/v1/docs (GET, HEAD)\n│   └── /assets/:asset (GET)\n└── /x\n    └── /y (POST)\n';
  expect(registeredRoutes(tree)).toEqual(['GET /api/v1/docs', 'GET /api/v1/docs/assets/{asset}', 'HEAD /api/v1/docs', 'POST /x/y']);
});
