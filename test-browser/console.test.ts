import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  blueInkNearTop,
  gzippedJsBytes,
  inkOf,
  lowContrast,
  openPage,
  shot,
  signIn,
  useServiceAndBrowser,
} from './harness.js';

// What an operator does in the console, checked by what they would see: signing in, a site's
// values changing live, a chart drawn from summaries, an alarm resolved, a ticket's images.

const SITE = 'Pecos SWD 1';
const SENSOR = { id: 10100, name: 'Discharge Pressure 1' };
const iso = (ms: number) => new Date(ms).toISOString();
/** A datetime-local value: a wall-clock time of the zone the console shows (the site's by default). */
const local = (ms: number, timeZone = 'America/Chicago') =>
  new Date(ms).toLocaleString('sv-SE', { timeZone }).slice(0, 16).replace(' ', 'T');

describe('the console in Chromium', () => {
  const ctx = useServiceAndBrowser();

  it('opens at / on the sign-in form, signs in, and lists the sites; measures the first usable page and the JS size', async () => {
    // npm start names the console's address beside the demo credentials.
    expect(ctx.svc.server.stdout()).toMatch(/Console:\s+http:\/\/localhost:\d+\/console\/ /);
    const { page, errors, context } = await openPage(ctx.browser);
    await page.goto(`${ctx.svc.base}/`);
    await page.getByLabel('Client ID').waitFor();
    // Measured by the page itself: from the start of navigation (the redirect included) to the form rendered.
    const mark = (name: string) =>
      page.evaluate((n) => performance.getEntriesByName(n).at(-1)?.startTime ?? NaN, name);
    const usable = await mark('console:sign-in-ready');
    expect(usable).toBeGreaterThan(0);
    expect(page.url()).toBe(`${ctx.svc.base}/console/`);
    expect(await page.getByRole('button', { name: 'Sign in' }).isEnabled()).toBe(true);
    await shot(page, 'sign-in');
    expect(await lowContrast(page)).toEqual([]);

    await page.getByLabel('Client ID').fill('demo');
    await page.getByLabel('Client secret').fill(ctx.svc.secret);
    const t1 = await page.evaluate(() => performance.now());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: SITE }).waitFor();
    const sites = (await mark('console:sites-ready')) - t1;
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(4);
    // Active alarm counts and how long ago each site last reported, as the API has them.
    const pecos = rows.filter({ hasText: SITE });
    const active = await ctx.svc.post('/v1/edge/alarms/active', { siteIds: [1] });
    expect(active.body.length).toBeGreaterThan(0);
    await expect
      .poll(() => pecos.textContent())
      .toMatch(
        new RegExp(`Permian Water Services\\s*Active\\s*${active.body.length}\\s*\\d+ (s|min) ago`),
      );
    expect(await rows.filter({ hasText: 'Kermit Disposal' }).textContent()).toContain('Inactive');
    // The token is in this tab's sessionStorage, never in a cookie or localStorage.
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate(() => sessionStorage.getItem('site-monitor.session'))).toContain(
      '"clientId":"demo"',
    );

    // Search by name keeps the filter in the address.
    await page.getByLabel('Search by name').fill('mentone');
    await expect.poll(() => rows.count()).toBe(1);
    expect(page.url()).toContain('name=mentone');
    expect(await rows.first().textContent()).toContain('Mentone Tank Battery');
    await page.getByLabel('Search by name').fill('');
    await expect.poll(() => rows.count()).toBe(4);
    await shot(page, 'sites');
    expect(await lowContrast(page)).toEqual([]);

    const js = gzippedJsBytes();
    console.log(
      `console: sign-in form usable ${Math.round(usable)} ms after navigation (fresh profile); sites listed ${Math.round(sites)} ms after "Sign in"; JavaScript ${(js / 1024).toFixed(1)} KB gzipped`,
    );
    expect(js).toBeLessThan(150 * 1024);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a site with live values: a reading uploaded through the API appears without reloading, and so does a new alarm', async () => {
    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    await page.getByRole('link', { name: SITE }).click();
    await page.getByRole('heading', { name: SITE }).waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(`^${SENSOR.name}`) });
    await expect.poll(() => row.textContent()).toMatch(/psi/);
    expect(await row.textContent()).not.toContain('4,321.5 psi');
    // A tank group's every figure with its unit: levels from its level registers, its total in its volume's.
    const tank = page.getByRole('row', { name: /^Skim Tanks/ });
    await expect
      .poll(() => tank.textContent())
      .toMatch(/entry [\d.,]+ ft · exit [\d.,]+ ft · [\d.,]+ bbl total/);

    const upload = await ctx.svc.post('/v1/edge/readings/sensor', {
      sensorID: SENSOR.id,
      value: 4321.5,
      timestamp: new Date().toISOString(),
    });
    expect(upload.status).toBe(201);
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('4,321.5 psi');
    expect(page.url()).toMatch(/\/console\/sites\/1$/);

    const alarm = await ctx.svc.post('/v1/edge/alarms', {
      siteId: 1,
      sensorID: SENSOR.id,
      alarmType: 'ConsoleCheck',
      severity: 'minor',
      message: 'Seen from the browser test',
      value: 4321.5,
      timestamp: new Date().toISOString(),
    });
    expect(alarm.status).toBe(201);
    const alarmRow = page.getByRole('row', { name: /ConsoleCheck/ });
    await alarmRow.waitFor({ timeout: 15_000 });
    expect(await alarmRow.textContent()).toContain(SENSOR.name);
    await shot(page, 'site');
    expect(await lowContrast(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('draws a chart from the summaries of the chosen range, and downloads them as CSV', async () => {
    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    await page.goto(`${ctx.svc.base}/console/sites/1`);
    await page.getByRole('link', { name: `Chart of ${SENSOR.name}` }).click();
    await page.getByRole('button', { name: '7 d' }).click();
    const chart = page.getByRole('img', { name: `Chart of ${SENSOR.name}` });
    await chart.locator('canvas').waitFor();
    await expect.poll(() => page.locator('figcaption').textContent()).toContain('1h summaries');
    // As many points as the API has hourly buckets for that week (the demo holds a week of history).
    const points = Number(await chart.getAttribute('data-points'));
    expect(points).toBeGreaterThan(100);
    const caption = (await page.locator('figcaption').textContent())!;
    expect(caption).toContain(`${points} buckets`);
    expect(caption).toContain('America/Chicago');
    expect(await inkOf(page, '.chart canvas')).toBeGreaterThan(2000);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split(/\r?\n/);
    expect(csv[0]).toBe('sensorID,start,end,count,min,max,avg,first,last');
    expect(csv.length - 1).toBe(points);
    await shot(page, 'charts');
    expect(await lowContrast(page)).toEqual([]);

    // A custom range of 24 whole hours (typed in the zone shown, the site's), per hour: 24 buckets.
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    await page.getByRole('button', { name: 'Custom' }).click();
    await page.getByLabel('From').fill(local(hour - 48 * 3_600_000));
    await page.getByLabel('To').fill(local(hour - 24 * 3_600_000));
    await page.getByLabel('Interval').selectOption('1h');
    await expect.poll(() => chart.getAttribute('data-points')).toBe('24');
    expect(await page.locator('figcaption').textContent()).toContain('24 buckets');

    // Raw values of the last 24 hours, in UTC.
    await page.getByRole('button', { name: '24 h' }).click();
    await page.getByLabel('Time zone').selectOption('utc');
    await page.getByLabel('Raw values').check();
    await expect
      .poll(() => page.locator('figcaption').textContent())
      .toMatch(/raw values.*\(UTC\)/);
    // Denser than the hourly summaries of the same day; the caption counts what is drawn.
    const raw = Number(await chart.getAttribute('data-points'));
    expect(raw).toBeGreaterThan(48);
    expect(await page.locator('figcaption').textContent()).toContain(`${raw} values`);
    expect(await inkOf(page, '.chart canvas')).toBeGreaterThan(1000);
    expect(page.url()).toContain('raw=1');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('offers a time-weighted average beside the sample average: the request carries it, the chart and the CSV show what came back', async () => {
    // Reported by exception (contract 13's example): 100 for 58 minutes, one sample of 200, back to 100.
    const hour = Math.floor((Date.now() - 20 * 86_400_000) / 3_600_000) * 3_600_000;
    const at = (minute: number, value: number) => ({
      sensorID: SENSOR.id,
      timestamp: iso(hour + minute * 60_000),
      value,
    });
    const seed = await ctx.svc.post('/v1/edge/logs/sensor/batch', [
      at(-60, 100),
      at(0, 100),
      at(58, 100),
      at(59, 200),
      at(60, 100),
      at(120, 100),
    ]);
    expect(seed.status).toBe(201);
    const [from, to] = [hour - 3_600_000, hour + 2 * 3_600_000];
    const span = { start: iso(from), end: iso(to), interval: '1h', timeZone: 'UTC' };
    const avgOf = async (calculationBasis: string) => {
      const res = await ctx.svc.post('/v1/sensors/logs/load', {
        sensorIds: [SENSOR.id],
        ...span,
        calculationBasis,
      });
      return res.body.find((b: { start: string }) => Date.parse(b.start) === hour).avg as number;
    };
    const byEvent = await avgOf('eventWeighted');
    const byTime = await avgOf('timeWeighted');
    expect(byEvent).toBeCloseTo(400 / 3, 6);
    expect(byTime).toBeCloseTo((58 * 100 + 150 + 150) / 60, 6);

    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    const loads: unknown[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/sensors/logs/load')) loads.push(r.postDataJSON());
    });
    await page.goto(
      `${ctx.svc.base}/console/charts?site=1&kind=sensor&id=${SENSOR.id}&range=custom&from=${local(from, 'UTC')}&to=${local(to, 'UTC')}&interval=1h&tz=utc`,
    );
    const chart = page.getByRole('img', { name: `Chart of ${SENSOR.name}` });
    const caption = page.locator('figcaption');
    await chart.locator('canvas').waitFor();
    expect(loads.at(-1)).toEqual({
      sensorIds: [SENSOR.id],
      ...span,
      calculationBasis: 'eventWeighted',
    });
    // Pointing at the middle of the three hourly buckets (the x axis spans the requested range) shows
    // its average in the chart's legend, formatted as the legend formats numbers.
    const legendAt = async (label: string) => {
      const box = (await chart.locator('.u-over').boundingBox())!;
      await page.mouse.move(box.x + 2, box.y + 2);
      await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2);
      return chart.evaluate(
        (el, l) =>
          [...el.querySelectorAll('.u-series')]
            .find((r) => r.querySelector('.u-label')?.textContent === l)
            ?.querySelector('.u-value')?.textContent,
        label,
      );
    };
    const shown = (v: number) =>
      page.evaluate((x) => new Intl.NumberFormat(navigator.language).format(x), v);
    await expect.poll(() => legendAt('Average')).toBe(await shown(byEvent));

    await page.getByLabel('Average', { exact: true }).selectOption({ label: 'Time-weighted' });
    await expect.poll(() => caption.textContent()).toContain('1h summaries, time-weighted');
    expect(page.url()).toContain('avg=time');
    expect(loads.at(-1)).toEqual({
      sensorIds: [SENSOR.id],
      ...span,
      calculationBasis: 'timeWeighted',
    });
    await expect.poll(() => legendAt('Time-weighted average')).toBe(await shown(byTime));
    expect(await shown(byTime)).not.toBe(await shown(byEvent));

    // The CSV is the same request as text/csv: the time-weighted buckets on screen.
    const points = Number(await chart.getAttribute('data-points'));
    const [csvRequest, download] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/v1/sensors/logs/load')),
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(csvRequest.headers().accept).toBe('text/csv');
    expect(csvRequest.postDataJSON()).toEqual(loads.at(-2));
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split(/\r?\n/);
    expect(csv[0]).toBe('sensorID,start,end,count,min,max,avg,first,last');
    expect(csv.length - 1).toBe(points);
    const middle = csv.slice(1).find((l) => Date.parse(l.split(',')[1]) === hour)!;
    expect(Number(middle.split(',')[6])).toBeCloseTo(byTime, 6);
    expect(download.suggestedFilename()).toBe(`sensor-${SENSOR.id}-1h-time-weighted.csv`);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('draws raw values over a year from plot values: a spike the daily average hides is drawn, asked of the plot route at one part per two pixels; the CSV is what is shown', async () => {
    // A day, 100 days ago, of one sample every five minutes around 800, and one of 25,000.
    const step = 300_000;
    const day = Math.floor((Date.now() - 100 * 86_400_000) / 86_400_000) * 86_400_000;
    const spikeAt = day + 12 * 3_600_000 + 7 * step;
    const logs = Array.from({ length: 288 }, (_, i) => ({
      sensorID: SENSOR.id,
      timestamp: iso(day + i * step),
      value: day + i * step === spikeAt ? 25_000 : 800 + (i % 12),
    }));
    expect((await ctx.svc.post('/v1/edge/logs/sensor/batch', logs)).status).toBe(201);
    const daily = await ctx.svc.post('/v1/sensors/logs/load', {
      sensorIds: [SENSOR.id],
      start: iso(day),
      end: iso(day + 86_400_000),
      interval: '1d',
      timeZone: 'UTC',
    });
    expect(daily.body[0].max).toBe(25_000);
    expect(daily.body[0].avg).toBeLessThan(1000);

    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    await page.goto(
      `${ctx.svc.base}/console/charts?site=1&kind=sensor&id=${SENSOR.id}&range=1y&tz=utc`,
    );
    const chart = page.getByRole('img', { name: `Chart of ${SENSOR.name}` });
    const caption = page.locator('figcaption');
    await expect.poll(() => caption.textContent()).toContain('1d summaries');
    await chart.locator('canvas').waitFor();
    // Daily sample averages: the spike lifts the scale (its max is drawn) but the average stays low.
    expect(await blueInkNearTop(page)).toBe(0);

    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/v1/sensors/logs/plot')),
      page.getByLabel('Raw values').check(),
    ]);
    const body = request.postDataJSON();
    const width = await chart.evaluate((el) => el.clientWidth);
    expect(body).toEqual({
      sensorId: SENSOR.id,
      start: expect.any(String),
      end: expect.any(String),
      intervals: Math.min(2000, Math.round(Math.max(280, width) / 2)),
    });
    expect(Date.parse(body.end) - Date.parse(body.start)).toBe(365 * 86_400_000);
    const rows: { timestamp: string; value: number }[] = await (await request.response())!.json();
    expect(rows.length).toBeLessThanOrEqual(4 * body.intervals);
    expect(rows.find((r) => Date.parse(r.timestamp) === spikeAt)?.value).toBe(25_000);
    await expect.poll(() => chart.getAttribute('data-points')).toBe(String(rows.length));
    expect(await caption.textContent()).toContain(
      `raw values (plot values of ${body.intervals} parts)`,
    );
    expect(await caption.textContent()).toContain(`${rows.length} values`);
    // The value line itself now reaches the top of the scale: the peak is visible.
    await expect.poll(() => blueInkNearTop(page)).toBeGreaterThan(0);
    expect(page.url()).toContain('raw=1');

    const [csvRequest, download] = await Promise.all([
      page.waitForRequest(
        (r) => r.url().endsWith('/v1/sensors/logs/plot') && r.headers().accept === 'text/csv',
      ),
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(csvRequest.postDataJSON()).toEqual(body);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split(/\r?\n/);
    expect(csv[0]).toBe('sensorID,timestamp,value');
    expect(csv.slice(1).map((l) => Number(l.split(',')[2]))).toEqual(rows.map((r) => r.value));
    expect(errors).toEqual([]);
    await context.close();
  });

  it('resolves an alarm on the alarms page, with a note; it stays resolved after a reload', async () => {
    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    await page.getByRole('link', { name: 'Alarms' }).click();
    await page.getByRole('row', { name: /PumpTrip/ }).waitFor(); // a major alarm of another site, before filtering
    // Equipment by name, from the configuration of its site.
    expect(await page.getByRole('row', { name: /PumpTrip/ }).textContent()).toContain(
      'Injection Pump 1',
    );
    await shot(page, 'alarms');
    expect(await lowContrast(page)).toEqual([]);
    await page.getByLabel('Severity').selectOption('critical');
    const row = page.getByRole('row', { name: /HighDischargePressure/ });
    // The header and the one critical alarm of the demo data.
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    expect(await row.textContent()).toContain('Pecos SWD 1');
    expect(page.url()).toContain('severity=critical');
    await row.getByRole('textbox').fill('Relief valve reset');
    await row.getByRole('button', { name: 'Resolve' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByText('0 active alarms').waitFor();
    await page.reload();
    await page.getByText('0 active alarms').waitFor();
    const active = await ctx.svc.post('/v1/edge/alarms/active', { siteIds: [1] });
    expect(active.body.map((a: { AlarmType: string }) => a.AlarmType)).not.toContain(
      'HighDischargePressure',
    );
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opens a ticket's images as thumbnails and full size, shows its change history, and zips the selection", async () => {
    const end = new Date(Date.now() + 60_000);
    const start = new Date(end.getTime() - 30 * 86_400_000);
    const list = await ctx.svc.post('/v1/transactions/logs/load', {
      siteIds: [1],
      start,
      end,
      motionCap: true,
    });
    const ticket = list.body.find((t: { TicketImageIDs: string[] }) => t.TicketImageIDs.length > 0);
    expect(ticket).toBeTruthy();
    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    await page.goto(
      `${ctx.svc.base}/console/tickets?site=1&from=${start.toISOString().slice(0, 10)}`,
    );
    await page.getByRole('button', { name: String(ticket.TicketNumber), exact: true }).click();
    const thumb = page
      .getByRole('img', { name: `Ticket image 1 of ticket ${ticket.TicketNumber}` })
      .first();
    await thumb.waitFor();
    await expect
      .poll(() => thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
      .toBeGreaterThan(0);
    await page.getByRole('heading', { name: 'Change history' }).waitFor();
    // The edits the API has for this ticket, each with its editor.
    const from = new Date(Date.parse(ticket.TransactionDate) - 86_400_000);
    const changes = await ctx.svc.post('/v1/transactions/change-logs', {
      start: from,
      end: new Date(from.getTime() + 60 * 86_400_000),
      filters: { siteIds: [1], ticketNums: [ticket.TicketNumber] },
    });
    expect(changes.status).toBe(200);
    if (changes.body.length)
      await page
        .locator('ul.changes')
        .getByText(changes.body[0].Editor, { exact: false })
        .first()
        .waitFor();
    else await page.getByText('No changes recorded.').waitFor();
    await page.getByRole('checkbox', { name: `Select ticket ${ticket.TicketNumber}` }).check();
    await shot(page, 'tickets');
    expect(await lowContrast(page)).toEqual([]);
    await page
      .getByRole('button', { name: `Open Ticket image 1 of ticket ${ticket.TicketNumber}` })
      .click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(
      await dialog.locator('img').evaluate((img: HTMLImageElement) => img.naturalWidth),
    ).toBeGreaterThan(0);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const button = page.getByRole('button', {
      name: `Download ticket images (${ticket.TicketImageIDs.length})`,
    });
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    const zip = readFileSync((await download.path())!);
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    expect(errors).toEqual([]);
    await context.close();
  });
});
