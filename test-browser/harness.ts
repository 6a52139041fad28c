import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort, ROOT, runTs, waitFor, type Running } from '../test/operations/process.js';

// The real service over HTTP on a fresh embedded database with the demo data, and Debian's
// Chromium driven by playwright-core (no browser download). CHROMIUM overrides the browser's path.

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CONSOLE_DIR = join(ROOT, 'dist', 'console');
/** Screenshots go to docs/screenshots with SCREENSHOTS=1 (npm run screenshots), else to a scratch folder. */
export const SHOTS =
  process.env.SCREENSHOTS === '1'
    ? join(ROOT, 'docs', 'screenshots')
    : join(tmpdir(), 'site-monitor-console-screenshots');

export interface Service {
  base: string;
  secret: string;
  server: Running;
  dataDir: string;
  /** A bearer token of the demo client, for the API calls a test makes beside the browser. */
  token(): Promise<string>;
  post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/** The service, with settings beside the defaults (`env`: MQTT_URL, STREAM_HEARTBEAT_MS, …). */
export async function startService(env: Record<string, string> = {}): Promise<Service> {
  if (!existsSync(join(CONSOLE_DIR, 'index.html')))
    throw new Error('the console is not built: run npm run build (npm run test:browser does)');
  const dataDir = mkdtempSync(join(tmpdir(), 'console-test-'));
  const port = await freePort();
  const server = runTs('server.ts', [], {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(async () => ((await fetch(`${base}/health`)).ok ? true : undefined), 150_000);
  const secret = await waitFor(() => /clientSecret:\s+(\S+)/.exec(server.stdout())?.[1]);
  const send = async (path: string, body: unknown, bearer?: string) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text(),
    };
  };
  let demoToken: string | undefined;
  const token = async () =>
    (demoToken ??= (await send('/token', { clientId: 'demo', clientSecret: secret })).body
      .accessToken as string);
  return {
    base,
    secret,
    server,
    dataDir,
    token,
    post: async (path, body, bearer) => send(path, body, bearer ?? (await token())),
    async stop() {
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, new Promise((r) => setTimeout(r, 10_000))]);
      server.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The service and a browser for the tests of one describe block: started before them, stopped after. */
export function useServiceAndBrowser(env: Record<string, string> = {}): {
  svc: Service;
  browser: Browser;
} {
  const ctx = {} as { svc: Service; browser: Browser };
  beforeAll(async () => {
    [ctx.svc, ctx.browser] = await Promise.all([startService(env), launchBrowser()]);
  });
  afterAll(async () => {
    await ctx.browser?.close();
    await ctx.svc?.stop();
  });
  return ctx;
}

/** A fresh browser profile's page (its own sessionStorage) of the given width; its errors (uncaught, or refused by the CSP) are collected. */
export async function openPage(
  browser: Browser,
  width = 1280,
  height = 800,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: { width, height },
    acceptDownloads: true,
    timezoneId: 'Europe/Paris',
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Anything the page's Content-Security-Policy refused would be a part of the console that does not work.
  page.on(
    'console',
    (m) =>
      m.type() === 'error' && /Content.Security.Policy/i.test(m.text()) && errors.push(m.text()),
  );
  return { context, page, errors };
}

export async function signIn(page: Page, svc: Service, clientId = 'demo', secret = svc.secret) {
  await page.goto(`${svc.base}/`);
  await page.getByLabel('Client ID').fill(clientId);
  await page.getByLabel('Client secret').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sites' }).waitFor();
}

export async function shot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  const file = join(SHOTS, `${name}.png`);
  const png = await page.screenshot({ path: file, fullPage: true });
  return { file, bytes: png.length };
}

/** Bytes of the console's JavaScript as a browser receives it (gzip). */
export function gzippedJsBytes(): number {
  const assets = join(CONSOLE_DIR, 'assets');
  return readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .reduce((n, f) => n + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
}

/** Pixels of a canvas that are not background: the chart drew something. */
export const inkOf = (page: Page, selector: string) =>
  page.locator(selector).evaluate((c: HTMLCanvasElement) => {
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200)) n++;
    return n;
  });

/**
 * Pixels of the chart's main series colour (#1f5fbf, the average or the raw value; min and max are
 * green and red) in the top `fraction` of its plot area: whether that line reaches the top of the scale.
 */
export const blueInkNearTop = (page: Page, fraction = 0.3) =>
  page.locator('.chart').evaluate((chart, f) => {
    const canvas = chart.querySelector('canvas')!;
    const box = canvas.getBoundingClientRect();
    const over = chart.querySelector('.u-over')!.getBoundingClientRect();
    const k = canvas.width / box.width;
    const [x0, y0] = [(over.left - box.left) * k, (over.top - box.top) * k];
    const [w, h] = [over.width * k, over.height * k * f];
    const d = canvas.getContext('2d')!.getImageData(x0, y0, w, h).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (d[i + 3] > 0 && d[i + 2] > 140 && d[i] < 120 && d[i + 2] > d[i + 1] + 40) n++;
    return n;
  }, fraction);

export { waitFor };

/**
 * Text on the page whose contrast with what is behind it is under 4.5:1 (WCAG AA for body text),
 * as "text (ratio)". The background is the nearest ancestor's opaque background colour.
 */
export const lowContrast = (page: Page) =>
  page.evaluate(() => {
    const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) =>
      [r, g, b]
        .map((v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
        .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const background = (el: Element | null): number[] => {
      for (; el; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const bad: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement!;
      const text = n.textContent!.trim();
      if (!text || !el.checkVisibility() || el.closest('.sr-only, .skip, .chart')) continue;
      const a = lum(rgb(getComputedStyle(el).color));
      const b = lum(background(el));
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) bad.push(`${text.slice(0, 30)} (${ratio.toFixed(2)})`);
    }
    return [...new Set(bad)];
  });
