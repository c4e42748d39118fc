import { chromium as playwright, type Page } from 'playwright-core';
import path from 'node:path';
import { expect } from 'vitest';
import { writeBulkHotspots } from './parquet.ts';
import { writeSampleData } from './sample-data.ts';
import { startServer, type TestServer } from './server.ts';

// Driving the explorer page in headless Chromium, as a person does: open a view, type the key
// when asked, wait for the view to be drawn (the page marks it on <body>), read what it shows.

export interface Tab {
  tab: Page;
  /** Every URL the tab requested. */
  requests: string[];
}

export type OpenTab = (viewport?: { width: number; height: number }) => Promise<Tab>;

/** One browser, one context (downloads accepted; a time zone if told); tabs opened on demand, 1280 × 800 unless told. */
export async function withBrowser<T>(executablePath: string, use: (open: OpenTab) => Promise<T>, options: { timezoneId?: string } = {}): Promise<T> {
  const browser = await playwright.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const context = await browser.newContext({ acceptDownloads: true, ...options });
    return await use(async (viewport = { width: 1280, height: 800 }) => {
      const tab = await context.newPage();
      await tab.setViewportSize(viewport);
      const requests: string[] = [];
      tab.on('request', (r) => requests.push(r.url()));
      return { tab, requests };
    });
  } finally {
    await browser.close();
  }
}

export const exploreUrl = (base: string, params: Record<string, string>) => `${base}/api/v1/explore?${new URLSearchParams(params)}`;

/** The view drawn: every request of it answered (`data-ready` true), or one refused (`error`). */
export async function drawn(tab: Page): Promise<string> {
  await tab.waitForSelector('body[data-ready]', { timeout: 30_000 });
  return (await tab.getAttribute('body', 'data-ready'))!;
}

export async function settled(tab: Page): Promise<void> {
  expect(await drawn(tab), (await tab.textContent('#status')) ?? '').toBe('true');
}

/** Opens a view; types the key when the page asks for it; waits until the view is drawn. */
export async function openView(tab: Page, url: string, key: string): Promise<void> {
  await tab.goto(url);
  await tab.waitForFunction(() => !(document.getElementById('key-form') as HTMLFormElement).hidden || document.body.hasAttribute('data-ready'));
  if (await tab.isVisible('#key-form')) {
    await tab.fill('#key', key);
    await tab.click('#key-form button');
  }
  await drawn(tab);
}

/** #row-count as a number (group separators allowed). */
export const shownCount = async (tab: Page) => Number((await tab.textContent('#row-count'))!.replace(/,/g, ''));

/** Drags across the counts' bar of one bucket (its title), from its left edge to its right edge. */
export async function dragAcross(tab: Page, bucket: string): Promise<void> {
  const bar = tab.locator('#chart rect.bar', { has: tab.locator('title', { hasText: bucket }) });
  const box = (await bar.boundingBox())!;
  await tab.mouse.move(box.x + 1, box.y + box.height / 2);
  await tab.mouse.down();
  await tab.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
  await tab.mouse.move(box.x + box.width - 1, box.y + box.height / 2, { steps: 4 });
  await tab.mouse.up();
}

/** The explorer tests' server: the sample data plus 300 detections on 2025-08-05, and ROW_LIMIT 100 so a day's view is past it. */
export async function exploreServer(): Promise<TestServer> {
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 300, 2, 60);
  return startServer(dataDir, { ROW_LIMIT: '100' });
}

/** Opens the view of these parameters on that server (typing its key when asked) and waits until it is drawn. */
export async function showView(tab: Page, s: TestServer, params: Record<string, string>): Promise<void> {
  await openView(tab, exploreUrl(s.url, params), s.key);
  await settled(tab);
}
