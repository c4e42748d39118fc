import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DATASETS } from '../../datasets/index.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { chromium as chromiumService, needService } from '../helpers/services.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
const CHROMIUM = chromiumService();

let server: TestServer | undefined;
beforeAll(async () => {
  server = await startServer(await writeSampleData());
});
afterAll(async () => {
  await server?.close();
});

/** Chromium, headless, with nothing that could reach the network on its own; a fresh profile per run. */
async function chromium(program: string, args: string[]): Promise<string> {
  const profile = await tempDir('fire-api-chromium-');
  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`];
  try {
    const { stdout } = await run(program, [...flags, ...args], { timeout: 60_000, maxBuffer: 32 * 1024 * 1024 });
    return stdout;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

it('the documentation page renders in headless Chromium and names all five data endpoints', async (ctx) => {
  const program = needService(ctx, CHROMIUM);
  // The virtual time budget lets Swagger UI fetch the document and render before the DOM is dumped.
  const dom = await chromium(program, ['--virtual-time-budget=20000', '--dump-dom', `${server!.url}/api/v1/docs?format=html`]);
  // data-path attributes exist only once Swagger UI has rendered the operations from the served document.
  const rendered = [...dom.matchAll(/data-path="([^"]+)"/g)].map((m) => m[1]);
  for (const d of DATASETS) expect(rendered).toContain(`/api/v1/${d.name}`);
  expect(rendered).toEqual(expect.arrayContaining(['/api/v1/docs', '/healthz']));
  expect(dom).toContain('Truncation and continuation');
  expect(dom).toContain('id="problem-unavailable"');
}, 90_000);
