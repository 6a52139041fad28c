import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lowContrast, openPage, shot, signIn, useServiceAndBrowser } from './harness.js';

// Multi-pen trends, the one time zone of every time shown, and the dark theme, checked by what a
// person sees: axes, legends, the CSV, the header, the times on the pages, the colours.

const SENSOR = { id: 10100, name: 'Discharge Pressure 1' };
const HOUR = 3_600_000;
/** The fields of a CSV line (quoted fields may hold commas and doubled quotes). */
const fields = (line: string) =>
  [...line.matchAll(/(?:^|,)("(?:[^"]|"")*"|[^,]*)/g)].map((m) =>
    m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1],
  );

interface Light {
  site: { Name: string; TimeZone: string | null };
  sensors: { sensor: { SiteSensorID: number; Name: string; Units: string } }[];
  pumps: { pump: { SitePumpID: number; Name: string } }[];
}

describe('trends, time zones and the dark theme in Chromium', () => {
  const ctx = useServiceAndBrowser();
  const config = async (siteId: number): Promise<Light> =>
    (
      await fetch(`${ctx.svc.base}/v1/config/site/light?siteId=${siteId}`, {
        headers: { authorization: `Bearer ${await ctx.svc.token()}` },
      })
    ).json();
  const csvOf = async (page: import('playwright-core').Page) => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    return {
      name: download.suggestedFilename(),
      lines: readFileSync((await download.path())!, 'utf8')
        .trim()
        .split(/\r?\n/),
    };
  };

  it('draws pens of several sites and units on one time axis with a y axis per unit, keeps them in the address, and downloads one CSV column per pen', async () => {
    const [one, two] = [await config(1), await config(2)];
    const pump = one.pumps[0].pump;
    const other = two.sensors.find((s) => s.sensor.Units === 'psi')!.sensor;
    // A past day (older than any demo history), one sample an hour at a minute past: a sensor of
    // each site, and a pump running for the first six hours, stopped after.
    const day = Math.floor((Date.now() - 200 * 86_400_000) / 86_400_000) * 86_400_000;
    const at = (i: number) => new Date(day + i * HOUR + 60_000).toISOString();
    const hours = Array.from({ length: 12 }, (_, i) => i);
    const seeds = [
      [
        '/v1/edge/logs/sensor/batch',
        hours.map((i) => ({ sensorID: SENSOR.id, timestamp: at(i), value: 500 + i })),
      ],
      [
        '/v1/edge/logs/sensor/batch',
        hours.map((i) => ({ sensorID: other.SiteSensorID, timestamp: at(i), value: 900 - i })),
      ],
      [
        '/v1/edge/logs/pump/batch',
        hours.map((i) => ({ sitePumpID: pump.SitePumpID, timestamp: at(i), running: i < 6 })),
      ],
    ] as const;
    for (const [path, body] of seeds) expect((await ctx.svc.post(path, body)).status).toBe(201);

    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    // From one equipment's chart to a trend of it.
    await page.goto(`${ctx.svc.base}/console/charts?site=1&kind=sensor&id=${SENSOR.id}&range=7d`);
    await page.getByRole('button', { name: 'Compare with other equipment' }).click();
    await page.getByRole('heading', { name: 'Pens' }).waitFor();
    expect(new URL(page.url()).searchParams.get('pens')).toBe(`1.sensor.${SENSOR.id}.avg.s`);

    // A pump's running % of the same site, through the form.
    await page.getByLabel('Site', { exact: true }).selectOption({ label: one.site.Name });
    await page.getByLabel('Equipment').selectOption({ label: pump.Name });
    await page.getByLabel('Field').selectOption({ label: 'Running %' });
    await page.getByLabel('Basis', { exact: true }).selectOption({ label: 'Time-weighted' });
    await page.getByRole('button', { name: 'Add pen' }).click();
    await expect
      .poll(() => new URL(page.url()).searchParams.get('pens'))
      .toBe(`1.sensor.${SENSOR.id}.avg.s,1.pump.${pump.SitePumpID}.runningPercent.t`);
    const chart = page.getByRole('img', { name: 'Trend of 2 pens' });
    await chart.locator('canvas').waitFor();
    // Two units (psi and %): two y axes beside the time axis.
    await expect.poll(() => chart.locator('.u-axis').count()).toBe(3);
    // One site: "site" is that site's zone, in the header too.
    await expect.poll(() => page.locator('header .zone-now').textContent()).toBe('America/Chicago');

    // A third pen of another site, in psi: still two y axes; the zone falls back to UTC.
    const pens = `1.sensor.${SENSOR.id}.avg.s,1.pump.${pump.SitePumpID}.runningPercent.t,2.sensor.${other.SiteSensorID}.max.s`;
    const from = new Date(day).toISOString().slice(0, 16);
    const to = new Date(day + 12 * HOUR).toISOString().slice(0, 16);
    await page.goto(
      `${ctx.svc.base}/console/charts?pens=${pens}&range=custom&from=${from}&to=${to}&interval=1h&tz=utc`,
    );
    const three = page.getByRole('img', { name: 'Trend of 3 pens' });
    await three.locator('canvas').waitFor();
    expect(await three.locator('.u-axis').count()).toBe(3);
    const legend = await three.locator('.u-legend .u-label').allTextContents();
    expect(legend).toEqual([
      'Time',
      `${one.site.Name} · ${SENSOR.name} · Average (psi)`,
      `${one.site.Name} · ${pump.Name} · Running %, time-weighted (%)`,
      `${two.site.Name} · ${other.Name} · Max (psi)`,
    ]);
    expect(await page.locator('header .zone-now').textContent()).toBe('UTC');
    const caption = page.locator('figcaption');
    await expect.poll(() => caption.textContent()).toContain('(UTC)');
    await shot(page, 'trend');

    const csv = await csvOf(page);
    expect(csv.name).toBe('trend-3-pens.csv');
    expect(fields(csv.lines[0])).toEqual(['time', ...legend.slice(1)]);
    const rows = csv.lines.slice(1).map(fields);
    expect(rows.every((r) => r.length === 4)).toBe(true);
    expect(rows.length).toBe(Number(await three.getAttribute('data-points')));
    // Each column is its pen's hourly values: the sensors' averages and maxima, the pump's
    // time-weighted running % (running until 06:01, stopped after).
    const byHour = new Map(rows.map((r) => [Date.parse(r[0]), r.slice(1).map(Number)]));
    for (const i of hours) {
      const [avg, running, max] = byHour.get(day + i * HOUR)!;
      expect([avg, max]).toEqual([500 + i, 900 - i]);
      if (i !== 6) expect(running).toBe(i < 6 ? 100 : 0);
    }
    expect(byHour.get(day + 6 * HOUR)![1]).toBeCloseTo(100 / 60, 6);

    // A reload (or the address shared) draws the same trend.
    const before = await caption.textContent();
    await page.reload();
    await page.getByRole('img', { name: 'Trend of 3 pens' }).locator('canvas').waitFor();
    expect(await caption.textContent()).toBe(before);
    expect((await csvOf(page)).lines).toEqual(csv.lines);

    // Each pen's basis is its own: the sensor's raw values (plot values) beside the summaries.
    const plots: unknown[] = [];
    page.on(
      'request',
      (r) => r.url().endsWith('/v1/sensors/logs/plot') && plots.push(r.postDataJSON()),
    );
    await page
      .getByLabel(`Basis of ${one.site.Name} · ${SENSOR.name} · Average (psi)`)
      .selectOption({ label: 'Raw values' });
    await expect
      .poll(() => new URL(page.url()).searchParams.get('pens'))
      .toContain(`1.sensor.${SENSOR.id}.value.r`);
    await expect.poll(() => plots.length).toBeGreaterThan(0);
    await expect.poll(() => caption.textContent()).toContain('raw values');
    const raw = await csvOf(page);
    // The raw samples are at their own instants (a minute past each hour), beside the hourly buckets.
    const rawColumn = raw.lines.slice(1).map(fields);
    for (let i = 0; i < 12; i++)
      expect(
        Number(
          rawColumn.find((r) => r[0] === new Date(day + i * HOUR + 60_000).toISOString())?.[1],
        ),
      ).toBe(500 + i);

    // Removing a pen takes it out of the address and the chart.
    await page.getByRole('button', { name: `Remove ${legend[3]}` }).click();
    await page.getByRole('img', { name: 'Trend of 2 pens' }).locator('canvas').waitFor();
    expect(new URL(page.url()).searchParams.get('pens')).not.toContain('2.sensor');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows every time in the zone the person chooses in the header, remembered by the browser: site, browser or UTC', async () => {
    const end = new Date(Date.now() + 60_000);
    const list = await ctx.svc.post('/v1/transactions/logs/load', {
      siteIds: [1],
      start: new Date(end.getTime() - 30 * 86_400_000),
      end,
    });
    const ticket = list.body.sort((a: any, b: any) =>
      b.TransactionDate.localeCompare(a.TransactionDate),
    )[0];
    const shown = (zone: string) =>
      new Intl.DateTimeFormat('en-GB', {
        dateStyle: 'medium',
        timeStyle: 'short',
        timeZone: zone,
      }).format(new Date(ticket.TransactionDate));
    expect(shown('UTC')).not.toBe(shown('America/Chicago'));

    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    const zoneNow = page.locator('header .zone-now');
    // The site page: the site's zone by default, for its ticket list too.
    await page.goto(`${ctx.svc.base}/console/sites/1`);
    const item = page.getByRole('listitem').filter({ hasText: `Ticket ${ticket.TicketNumber}` });
    await expect.poll(() => zoneNow.textContent()).toBe('America/Chicago');
    await expect.poll(() => item.textContent()).toContain(shown('America/Chicago'));

    await page.getByLabel('Time zone').selectOption('utc');
    await expect.poll(() => zoneNow.textContent()).toBe('UTC');
    await expect.poll(() => item.textContent()).toContain(shown('UTC'));
    await page.getByLabel('Time zone').selectOption('browser');
    await expect.poll(() => zoneNow.textContent()).toBe('Europe/Paris');
    await expect.poll(() => item.textContent()).toContain(shown('Europe/Paris'));

    // The tickets page: its day filter and its dates in the same zone; the choice survives a reload.
    await page.getByLabel('Time zone').selectOption('utc');
    await page.getByRole('link', { name: 'Tickets', exact: true }).click();
    await page.reload();
    await expect.poll(() => zoneNow.textContent()).toBe('UTC');
    await page.getByLabel('From (day in UTC)').waitFor();
    const row = page
      .getByRole('row')
      .filter({ hasText: shown('UTC') })
      .first();
    await row.waitFor();
    await page.getByLabel('Time zone').selectOption('browser');
    await page.getByLabel('From (day in Europe/Paris)').waitFor();
    await expect
      .poll(() =>
        page
          .getByRole('row')
          .filter({ hasText: shown('Europe/Paris') })
          .count(),
      )
      .toBeGreaterThan(0);

    // Charts: a custom range's inputs are wall-clock times of the zone, and follow it when it changes.
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR;
    const utc = (ms: number) => new Date(ms).toISOString().slice(0, 16);
    await page.getByLabel('Time zone').selectOption('utc');
    await page.goto(
      `${ctx.svc.base}/console/charts?site=1&kind=sensor&id=${SENSOR.id}&range=custom&from=${utc(hour)}&to=${utc(hour + 24 * HOUR)}&interval=1h`,
    );
    await page
      .getByRole('img', { name: `Chart of ${SENSOR.name}` })
      .locator('canvas')
      .waitFor();
    expect(await page.getByLabel('From').inputValue()).toBe(utc(hour));
    await page.getByLabel('Time zone').selectOption('site');
    const chicago = (ms: number) =>
      new Date(ms)
        .toLocaleString('sv-SE', { timeZone: 'America/Chicago' })
        .slice(0, 16)
        .replace(' ', 'T');
    await expect.poll(() => page.getByLabel('From').inputValue()).toBe(chicago(hour));
    await expect
      .poll(() => page.locator('figcaption').textContent())
      .toContain('(America/Chicago)');
    expect(page.url()).toContain('tz=site');
    expect(await page.locator('figcaption').textContent()).toContain('24 buckets');
    expect(await page.evaluate(() => localStorage.getItem('site-monitor.zone'))).toBe('site');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('follows the browser’s dark preference with a toggle, readable text and a readable chart', async () => {
    const { page, errors, context } = await openPage(ctx.browser);
    await page.emulateMedia({ colorScheme: 'dark' });
    await signIn(page, ctx.svc);
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    const background = () =>
      page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(await theme()).toBe('dark');
    expect(await background()).toBe('rgb(18, 22, 27)');
    expect(await lowContrast(page)).toEqual([]);

    await page.goto(`${ctx.svc.base}/console/charts?site=1&kind=sensor&id=${SENSOR.id}&range=7d`);
    const chart = page.getByRole('img', { name: `Chart of ${SENSOR.name}` });
    await chart.locator('canvas').waitFor();
    expect(await lowContrast(page)).toEqual([]);
    // The axes' labels are drawn light on the dark page: bright pixels in the canvas.
    const bright = () =>
      chart.locator('canvas').evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4)
          if (d[i + 3] > 200 && d[i] > 180 && d[i + 1] > 180 && d[i + 2] > 180) n++;
        return n;
      });
    expect(await bright()).toBeGreaterThan(200);
    await shot(page, 'charts-dark');

    // The toggle overrides the preference, and is remembered.
    await page.getByRole('button', { name: 'Dark theme' }).click();
    expect(await theme()).toBe('light');
    expect(await background()).toBe('rgb(255, 255, 255)');
    await expect.poll(() => bright()).toBe(0);
    expect(await lowContrast(page)).toEqual([]);
    await page.reload();
    await page
      .getByRole('img', { name: `Chart of ${SENSOR.name}` })
      .locator('canvas')
      .waitFor();
    expect(await theme()).toBe('light');
    expect(
      await page.getByRole('button', { name: 'Dark theme' }).getAttribute('aria-pressed'),
    ).toBe('false');
    expect(errors).toEqual([]);
    await context.close();
  });
});
