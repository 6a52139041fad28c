import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { inkOf, lowContrast, openPage, shot, signIn, useServiceAndBrowser } from './harness.js';

// Alarm management in the console, checked by what a person sees and by what the API then says:
// acknowledge, shelve, unshelve and resolve with a note, offered only to the roles that may; the
// unacknowledged alarms standing out; an alarm's journal; the banner of unacknowledged critical and
// major alarms; communication loss and the worst-first order on the sites list; a site's alarm
// performance.

const PECOS = { id: 1, name: 'Pecos SWD 1' };
const SENSOR = { id: 10100, name: 'Discharge Pressure 1' };
const DAY = 86_400_000;

interface ActiveAlarm {
  SiteAlarmLogID: string;
  SiteID: number;
  AlarmType: string;
  Severity: string;
  AcknowledgedAt: string | null;
  AcknowledgedBy: string | null;
  ShelvedUntil: string | null;
}

describe('alarm management in the console', () => {
  const ctx = useServiceAndBrowser();
  const secrets = {} as Record<'operator' | 'viewer', string>;
  /** The site left silent for a minute, and a sensor of it. */
  const quiet = {} as { id: number; name: string; sensor: number };

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(ctx.svc.base + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        authorization: `Bearer ${await ctx.svc.token()}`,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const active = async (siteIds: number[]): Promise<ActiveAlarm[]> =>
    (await ctx.svc.post('/v1/edge/alarms/active', { siteIds })).body;
  /** Sends an alarm of the sensor of Pecos SWD 1 (or a site alarm of another site); its id. */
  const raise = async (alarmType: string, severity: string, siteId = PECOS.id) => {
    const res = await ctx.svc.post('/v1/edge/alarms', {
      siteId,
      ...(siteId === PECOS.id ? { sensorID: SENSOR.id } : {}),
      alarmType,
      severity,
      message: `${alarmType} from the browser test`,
      value: 1234,
      timestamp: new Date().toISOString(),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.SiteAlarmLogID as string;
  };
  const listed = async (id: string) => {
    const end = Date.now() + 60_000;
    const res = await ctx.svc.post('/v1/alarms/list', {
      siteIds: [PECOS.id],
      start: new Date(end - DAY).toISOString(),
      end: new Date(end).toISOString(),
      page: 1,
      perPage: 500,
    });
    return res.body.data.find((a: { SiteAlarmLogID: string }) => a.SiteAlarmLogID === id);
  };
  const journal = async (id: string, siteId = PECOS.id) => {
    const end = Date.now() + 60_000;
    const res = await ctx.svc.post('/v1/alarms/journal', {
      siteIds: [siteId],
      SiteAlarmLogID: id,
      start: new Date(end - DAY).toISOString(),
      end: new Date(end).toISOString(),
      page: 1,
      perPage: 100,
    });
    return res.body.data as { Event: string; By: string | null; Note: string | null }[];
  };
  const as = async (who: 'operator' | 'viewer' | 'demo') => {
    const opened = await openPage(ctx.browser);
    await signIn(opened.page, ctx.svc, who, who === 'demo' ? ctx.svc.secret : secrets[who]);
    return opened;
  };

  beforeAll(async () => {
    for (const role of ['operator', 'viewer'] as const) {
      const made = await api('POST', '/v1/admin/clients', { clientId: role, role, siteIds: '*' });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      secrets[role] = made.body.clientSecret;
    }
    // An active site other than Pecos, its communication loss after one minute of silence, and
    // data now: the minute runs while the other tests do.
    const sites = (await api('GET', '/v1/sites?page=1&perPage=100')).body.data as {
      SiteID: number;
      Active: boolean;
    }[];
    for (const s of sites.filter((x) => x.Active && x.SiteID !== PECOS.id)) {
      const config = (await api('GET', `/v1/config/site/light?siteId=${s.SiteID}`)).body;
      if (!config.sensors.length) continue;
      const { CompanyName: _, ...site } = config.site;
      const imported = await api('POST', '/v1/admin/import', {
        sites: [{ ...site, CommLossMinutes: 1 }],
      });
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      Object.assign(quiet, {
        id: s.SiteID,
        name: site.Name,
        sensor: config.sensors[0].sensor.SiteSensorID,
      });
      break;
    }
    expect(quiet.id).toBeGreaterThan(0);
    const reading = await ctx.svc.post('/v1/edge/readings/sensor', {
      sensorID: quiet.sensor,
      value: 1,
      timestamp: new Date().toISOString(),
    });
    expect(reading.status).toBe(201);
  });

  /** The row of an alarm type on the page. */
  const rowOf = (page: Page, alarmType: string) =>
    page.getByRole('row', { name: new RegExp(alarmType) });
  const ACTIONS = /^(Acknowledge|Shelve|Shelve again|Unshelve|Resolve)$/;

  it('offers acknowledge, shelve and resolve to an operator, and no action to a viewer', async () => {
    await raise('RoleCheck', 'major');
    const operator = await as('operator');
    await operator.page.goto(`${ctx.svc.base}/console/sites/${PECOS.id}`);
    const row = rowOf(operator.page, 'RoleCheck');
    // The buttons come once the console knows the client's role (GET /v1/me).
    await row.getByRole('button', { name: 'Acknowledge', exact: true }).waitFor();
    for (const name of ['Acknowledge', 'Shelve', 'Resolve'])
      expect(await row.getByRole('button', { name, exact: true }).count(), name).toBe(1);
    expect(await row.getByRole('button', { name: 'Unshelve' }).count()).toBe(0);
    expect(
      await row.getByRole('combobox', { name: /Shelve RoleCheck alarm \d+ for/ }).count(),
    ).toBe(1);
    await operator.context.close();

    const viewer = await as('viewer');
    for (const path of [`/sites/${PECOS.id}`, '/alarms']) {
      await viewer.page.goto(`${ctx.svc.base}/console${path}`);
      const seen = rowOf(viewer.page, 'RoleCheck');
      // The journal link comes once the console knows the role (GET /v1/me): the buttons would have too.
      await seen.getByRole('link', { name: /^Journal of RoleCheck/ }).waitFor();
      // The viewer sees the alarm, its state and its journal, and nothing to press.
      expect(await seen.textContent()).toContain('Unacknowledged');
      expect(await viewer.page.getByRole('button', { name: ACTIONS }).count(), path).toBe(0);
      expect(await viewer.page.getByRole('textbox', { name: /^Note for/ }).count()).toBe(0);
    }
    await viewer.page.getByRole('link', { name: /^Journal of RoleCheck/ }).click();
    await viewer.page.getByRole('heading', { name: 'Alarm journal' }).waitFor();
    await viewer.page.getByRole('cell', { name: 'Raised' }).waitFor();
    expect(await viewer.page.getByRole('button', { name: ACTIONS }).count()).toBe(0);
    await viewer.context.close();
  });

  it('makes unacknowledged alarms stand out, and acknowledges one with a note: AcknowledgedBy is the operator', async () => {
    const id = await raise('AckCheck', 'minor');
    const { page, errors, context } = await as('operator');
    await page.goto(`${ctx.svc.base}/console/sites/${PECOS.id}`);
    const row = rowOf(page, 'AckCheck');
    await row.waitFor();
    const look = () =>
      row.evaluate((tr) => ({
        weight: Number(getComputedStyle(tr.querySelector('td')!).fontWeight),
        bar: getComputedStyle(tr.querySelector('td')!).boxShadow,
        marked: tr.classList.contains('unacked'),
      }));
    expect(await row.textContent()).toContain('Unacknowledged');
    const before = await look();
    expect(before.marked).toBe(true);
    expect(before.weight).toBeGreaterThanOrEqual(600);
    expect(before.bar).toMatch(/inset/);
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'site-alarms-unacknowledged');

    await row.getByRole('textbox', { name: /^Note for AckCheck/ }).fill('Seen, crew on the way');
    await row.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    // The row changes from the stream: acknowledged by this client, no longer standing out.
    await expect.poll(() => row.textContent()).toContain('Acknowledged by operator');
    expect(await row.textContent()).not.toContain('Unacknowledged');
    const after = await look();
    expect(after.marked).toBe(false);
    expect(after.weight).toBeLessThan(600);
    expect(await row.getByRole('button', { name: 'Acknowledge', exact: true }).count()).toBe(0);

    const alarm = await listed(id);
    expect(alarm.AcknowledgedBy).toBe('operator');
    expect(alarm.AcknowledgedAt).not.toBeNull();
    expect(await journal(id)).toContainEqual(
      expect.objectContaining({
        Event: 'acknowledged',
        By: 'operator',
        Note: 'Seen, crew on the way',
      }),
    );
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shelves an alarm for the chosen minutes and unshelves it, each with a note', async () => {
    const id = await raise('ShelveCheck', 'warning');
    const { page, errors, context } = await as('operator');
    await page.goto(`${ctx.svc.base}/console/alarms?site=${PECOS.id}`);
    const row = rowOf(page, 'ShelveCheck');
    await row.waitFor();
    await row.getByRole('textbox').fill('Sensor being recalibrated');
    await row
      .getByRole('combobox', { name: /^Shelve ShelveCheck/ })
      .selectOption({ label: '30 min' });
    const asked = Date.now();
    await row.getByRole('button', { name: 'Shelve', exact: true }).click();
    await expect.poll(() => row.textContent()).toContain('Shelved until');
    const shelved = (await listed(id)).ShelvedUntil as string;
    expect(Date.parse(shelved) - asked).toBeGreaterThan(29 * 60_000);
    expect(Date.parse(shelved) - asked).toBeLessThan(31 * 60_000);

    await row.getByRole('textbox').fill('Recalibrated');
    await row.getByRole('button', { name: 'Unshelve', exact: true }).click();
    await expect.poll(() => row.textContent()).not.toContain('Shelved until');
    expect(await row.getByRole('button', { name: 'Unshelve' }).count()).toBe(0);
    expect((await listed(id)).ShelvedUntil).toBeNull();
    const entries = await journal(id);
    expect(entries).toContainEqual(
      expect.objectContaining({
        Event: 'shelved',
        By: 'operator',
        Note: 'Sensor being recalibrated',
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({ Event: 'unshelved', By: 'operator', Note: 'Recalibrated' }),
    );
    expect(errors).toEqual([]);
    await context.close();
  });

  it('lists the alarms resolved before anyone acknowledged them, and acknowledges one there', async () => {
    const id = await raise('ReturnedCheck', 'major');
    const done = await ctx.svc.post('/v1/edge/alarms/resolve', {
      siteId: PECOS.id,
      alarms: [{ SiteAlarmLogID: id, note: 'Cleared at the site' }],
    });
    expect(done.status).toBe(200);
    const { page, errors, context } = await as('operator');
    await page.goto(`${ctx.svc.base}/console/alarms`);
    await page
      .getByLabel('Show', { exact: true })
      .selectOption({ label: 'Resolved, not acknowledged (7 days)' });
    expect(page.url()).toContain('show=resolved');
    const row = rowOf(page, 'ReturnedCheck');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/Unacknowledged\s*Resolved by demo/);
    expect(await row.textContent()).toContain(SENSOR.name);
    // Resolved: only the acknowledgement is left to do.
    expect(await row.getByRole('button', { name: 'Resolve', exact: true }).count()).toBe(0);
    expect(await row.getByRole('button', { name: 'Shelve', exact: true }).count()).toBe(0);
    await row.getByRole('textbox').fill('Checked after the fact');
    await row.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    expect(await listed(id)).toMatchObject({
      AcknowledgedBy: 'operator',
      ResolveNote: 'Cleared at the site',
    });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opens an alarm's journal from the alarm: who, when, what and why, and resolves it there with a note", async () => {
    const id = await raise('JournalCheck', 'major');
    await ctx.svc.post('/v1/alarms/acknowledge', {
      siteId: PECOS.id,
      alarms: [{ SiteAlarmLogID: id, note: 'Acknowledged through the API' }],
    });
    const { page, errors, context } = await as('operator');
    await page.goto(`${ctx.svc.base}/console/alarms`);
    await page.getByRole('link', { name: `Journal of JournalCheck alarm ${id}` }).click();
    await page.getByRole('heading', { name: 'Alarm journal' }).waitFor();
    expect(page.url()).toContain(`id=${id}`);
    const entries = page.locator('table.journal tbody tr');
    await expect.poll(() => entries.count()).toBe(2);
    expect(await entries.nth(0).textContent()).toMatch(/Raised/);
    expect(await entries.nth(1).textContent()).toMatch(
      /Acknowledged\s*demo\s*Acknowledged through the API/,
    );
    // Each entry's time, as the journal has it.
    const [raisedEntry] = await journal(id);
    expect(raisedEntry.Event).toBe('raised');
    await shot(page, 'alarm-journal');
    expect(await lowContrast(page)).toEqual([]);

    // Resolved from its own page, with a note: the journal grows by the entry, the record says who.
    await page.getByRole('textbox', { name: /^Note for JournalCheck/ }).fill('Valve replaced');
    await page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await expect.poll(() => entries.count()).toBe(3);
    expect(await entries.nth(2).textContent()).toMatch(/Resolved\s*operator\s*Valve replaced/);
    await page.getByText('Resolved by operator').waitFor();
    expect(await page.getByRole('button', { name: 'Resolve', exact: true }).count()).toBe(0);
    const alarm = await listed(id);
    expect(alarm).toMatchObject({ ResolvedBy: 'operator', ResolveNote: 'Valve replaced' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows the count of unacknowledged critical and major alarms on every page, live, linking to them', async () => {
    const count = async () =>
      (await active([1, 2, 3, 4])).filter(
        (a) => ['critical', 'major'].includes(a.Severity) && !a.AcknowledgedAt && !a.ShelvedUntil,
      ).length;
    const { page, errors, context } = await as('demo');
    const banner = page.locator('.banner');
    const expected = (n: number) =>
      n ? `${n} unacknowledged critical or major alarm${n === 1 ? '' : 's'}` : 'No unacknowledged';
    // What the banner says is what the API says (polled: the service may raise an alarm meanwhile).
    const agrees = async () =>
      ((await banner.textContent()) ?? '').includes(expected(await count()));
    for (const path of [`/sites/${PECOS.id}`, '/alarms', '/charts', '/tickets', '/']) {
      await page.goto(`${ctx.svc.base}/console${path}`);
      await expect.poll(agrees, { message: path }).toBe(true);
    }
    const before = await banner.textContent();
    // A new critical alarm and a minor one (not counted): the banner follows without a reload.
    await raise('BannerCheck', 'critical');
    await raise('BannerMinor', 'minor');
    await expect.poll(() => banner.textContent()).not.toBe(before);
    await expect.poll(agrees).toBe(true);
    await shot(page, 'banner');
    expect(await lowContrast(page)).toEqual([]);

    await banner.getByRole('link').click();
    await page.getByRole('heading', { name: 'Alarms' }).waitFor();
    expect(page.url()).toContain('show=unacknowledged');
    const rows = page.locator('table.alarms tbody tr');
    await expect.poll(async () => (await rows.count()) === (await count())).toBe(true);
    const listed = await page.locator('table.alarms tbody').textContent();
    expect(listed).toContain('BannerCheck');
    expect(listed).not.toContain('BannerMinor');
    // Acknowledged: it leaves the banner's count and the list.
    const row = rowOf(page, 'BannerCheck');
    const shown = await banner.textContent();
    await row.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    await expect.poll(() => banner.textContent()).not.toBe(shown);
    await expect.poll(agrees).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sorts the sites by every column and worst first, and moves a site live when its state changes', async () => {
    const { page, errors, context } = await as('demo');
    const rows = page.locator('table.sites tbody tr');
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(4);
    const names = () => rows.locator('td:first-child').allTextContents();
    const column = (i: number) => rows.locator(`td:nth-child(${i})`).allTextContents();
    const header = (name: string) =>
      page.locator('table.sites thead').getByRole('button', { name: new RegExp(`^${name}`) });
    const sorted = (xs: string[], dir = 1) =>
      [...xs].sort(
        (a, b) => dir * a.localeCompare(b, undefined, { sensitivity: 'base', numeric: true }),
      );

    expect(await names()).toEqual(sorted(await names()));
    await header('Site').click();
    await expect.poll(names).toEqual(sorted(await names(), -1));
    expect(page.url()).toContain('dir=desc');
    await header('Company').click();
    await expect.poll(() => column(2)).toEqual(sorted(await column(2)));
    await header('Active alarms').click();
    await expect
      .poll(async () => (await column(4)).map(Number))
      .toEqual((await column(4)).map(Number).sort((a, b) => a - b));
    await header('Active alarms').click();
    await expect
      .poll(async () => (await column(4)).map(Number))
      .toEqual((await column(4)).map(Number).sort((a, b) => b - a));
    await header('Status').click();
    await expect.poll(async () => (await column(3)).indexOf('Inactive')).toBeGreaterThan(-1);
    const status = await column(3);
    expect(status.slice(status.indexOf('Inactive')).every((s) => s === 'Inactive')).toBe(true);
    await header('Last communication').click();
    expect(page.url()).toContain('sort=lastcomm');

    // Worst first: the overview's ranking (critical, communication loss, major, other, normal).
    await page.getByRole('button', { name: 'Worst first' }).click();
    expect(page.url()).toContain('sort=state');
    const ranks = () => rows.evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.state)));
    await expect.poll(async () => (await ranks()).includes(5)).toBe(true);
    expect(await ranks()).toEqual([...(await ranks())].sort());
    // A site in normal state gets a critical alarm: it moves to the top, without a reload.
    const rankOf = async () => {
      const [ns, rs] = [await names(), await ranks()];
      return new Map(ns.map((n, i) => [n, rs[i]]));
    };
    const normal = [...(await rankOf())].find(([name, r]) => r === 5 && name !== quiet.name)![0];
    const normalId = (
      (await api('GET', '/v1/sites?page=1&perPage=100')).body.data as {
        SiteID: number;
        Name: string;
      }[]
    ).find((s) => s.Name === normal)!.SiteID;
    await raise('SortCheck', 'critical', normalId);
    await expect.poll(async () => (await rankOf()).get(normal)).toBe(1);
    expect(await rows.filter({ hasText: normal }).textContent()).toContain('Critical alarm');
    // Among the first rows: only sites with a critical alarm come before it.
    const at = (await names()).indexOf(normal);
    expect((await ranks()).slice(0, at + 1).every((r) => r === 1)).toBe(true);
    expect(await ranks()).toEqual([...(await ranks())].sort());
    await shot(page, 'sites-worst-first');
    expect(await lowContrast(page)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('marks a site in communication loss on the sites list, ranks it, and clears it live when data comes', async () => {
    const { page, errors, context } = await as('demo');
    await page.goto(`${ctx.svc.base}/console/?sort=state`);
    const row = page.locator('table.sites tbody tr').filter({ hasText: quiet.name });
    await row.waitFor();
    // One minute of silence (and the check, every 15 s): the alarm the service raises shows.
    await expect
      .poll(() => row.textContent(), { timeout: 110_000, interval: 1000 })
      .toContain('Communication lost');
    const alarms = await active([quiet.id]);
    expect(alarms).toContainEqual(
      expect.objectContaining({ AlarmType: 'COMM_LOSS', Source: 'communication' }),
    );
    // Ranked after the sites with a critical alarm and before those with only major ones.
    const ranks = await page
      .locator('table.sites tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.state)));
    expect(ranks).toEqual([...ranks].sort());
    expect(await row.getAttribute('data-state')).toBe(
      alarms.some((a) => a.Severity === 'critical') ? '1' : '2',
    );
    await shot(page, 'sites-communication-lost');

    const reading = await ctx.svc.post('/v1/edge/readings/sensor', {
      sensorID: quiet.sensor,
      value: 2,
      timestamp: new Date().toISOString(),
    });
    expect(reading.status).toBe(201);
    await expect
      .poll(() => row.textContent(), { timeout: 15_000 })
      .not.toContain('Communication lost');
    expect(errors).toEqual([]);
    await context.close();
  }, 150_000);

  it("shows a site's alarm performance: rate over time, floods, top and chattering alarms", async () => {
    // A flood (22 alarms within seconds: more than 10 in at least one 10-minute window) and a
    // chattering alarm (raised three times within a minute).
    for (let i = 0; i < 22; i++) await raise(`Flood${i}`, 'warning');
    for (let i = 0; i < 3; i++) {
      const id = await raise('Chatter', 'minor');
      const done = await ctx.svc.post('/v1/edge/alarms/resolve', {
        siteId: PECOS.id,
        alarms: [{ SiteAlarmLogID: id }],
      });
      expect(done.status).toBe(200);
    }
    const end = Date.now() + 60_000;
    const [kpis] = (
      await ctx.svc.post('/v1/alarms/kpis', {
        siteIds: [PECOS.id],
        start: new Date(end - DAY).toISOString(),
        end: new Date(end).toISOString(),
      })
    ).body;
    expect(kpis.Chattering).toContainEqual(expect.objectContaining({ AlarmType: 'Chatter' }));

    const { page, errors, context } = await as('demo');
    await page.goto(`${ctx.svc.base}/console/sites/${PECOS.id}`);
    await page.getByRole('link', { name: 'Alarm performance' }).click();
    await page.getByRole('heading', { name: `Alarm performance of ${PECOS.name}` }).waitFor();
    const figure = (name: string) =>
      page.locator('dl.figures div').filter({ hasText: name }).locator('dd');
    await expect.poll(() => figure('Alarms raised').textContent()).toBe(String(kpis.Raised));
    expect(Number(await figure('Most in 10 minutes').textContent())).toBeGreaterThan(10);
    expect(await figure('Time in flood').textContent()).not.toBe('0 %');
    // The rate over time is drawn.
    const chart = page.getByRole('img', { name: `Alarm rate of ${PECOS.name}` });
    await chart.locator('canvas').waitFor();
    // One point per 10-minute window of the day (the partial windows at its ends included).
    expect([144, 145]).toContain(Number(await chart.getAttribute('data-points')));
    await expect.poll(() => inkOf(page, '.chart canvas')).toBeGreaterThan(0);
    expect(await page.locator('table.floods tbody tr').count()).toBeGreaterThanOrEqual(1);
    const chattering = page.locator('section').getByRole('table').last();
    expect(await chattering.textContent()).toMatch(new RegExp(`Chatter\\s*${SENSOR.name}\\s*3`));
    const top = page.locator('section').getByRole('table').nth(-2);
    expect(await top.locator('tbody tr').count()).toBe(kpis.TopAlarms.length);
    await shot(page, 'alarm-performance');
    expect(await lowContrast(page)).toEqual([]);

    // A week: the series is asked again for the longer range.
    await page.getByRole('button', { name: '7 d' }).click();
    expect(page.url()).toContain('range=7d');
    await expect
      .poll(async () => Number(await chart.getAttribute('data-points')))
      .toBeGreaterThanOrEqual(7 * 144);
    expect(errors).toEqual([]);
    await context.close();
  });
});
