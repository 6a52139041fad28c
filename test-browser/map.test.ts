import { describe, expect, it } from 'vitest';
import { openPage, shot, signIn, useServiceAndBrowser } from './harness.js';

// The sites map beside the list: a basemap served by the console itself (nothing fetched from
// elsewhere), a marker per site at its coordinates, coloured by the site's worst state, changing
// live with the site's alarms, and a click away from the site's page.

describe('the sites map in Chromium', () => {
  const ctx = useServiceAndBrowser();

  it('marks every site by its worst state on a basemap of its own, live, and opens a site from its marker', async () => {
    const { page, errors, context } = await openPage(ctx.browser);
    const elsewhere: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(ctx.svc.base) && !/^(data|blob):/.test(r.url()))
        elsewhere.push(r.url());
    });
    await signIn(page, ctx.svc);
    await page.locator('.site-map-canvas[data-ready="true"]').waitFor();
    // The basemap is drawn: country and state shapes.
    expect(await page.locator('path.map-land').count()).toBeGreaterThan(0);
    expect(await page.locator('path.map-states').count()).toBeGreaterThan(0);

    // One marker per site listed (the demo's sites all have coordinates).
    const rows = await page.locator('tbody tr').count();
    const markers = page.locator('path.site-marker');
    await expect.poll(() => markers.count()).toBe(rows);

    // A site with no critical alarm turns critical when one is raised, without a reload, and back
    // when it is resolved.
    const states = async () =>
      Object.fromEntries(
        await markers.evaluateAll((els) =>
          els.map((el) => [(el as SVGElement).dataset.siteId, (el as SVGElement).dataset.state]),
        ),
      ) as Record<string, string>;
    await expect.poll(async () => Object.keys(await states()).length).toBe(rows);
    const before = await states();
    const site = Object.keys(before).find((id) => before[id] !== 'critical')!;
    expect(site).toBeDefined();
    const raised = await ctx.svc.post('/v1/edge/alarms', {
      siteId: Number(site),
      alarmType: 'MapCheck',
      severity: 'critical',
      message: 'Seen on the map',
      timestamp: new Date().toISOString(),
    });
    expect(raised.status).toBe(201);
    await expect.poll(async () => (await states())[site], { timeout: 15_000 }).toBe('critical');
    expect(
      await page.locator('.map-legend li', { hasText: 'Critical alarm' }).textContent(),
    ).toMatch(/\(\d+\)/);
    await shot(page, 'sites-map');
    const resolved = await ctx.svc.post('/v1/edge/alarms/resolve', {
      siteId: Number(site),
      alarms: [{ SiteAlarmLogID: raised.body.SiteAlarmLogID, note: 'map test' }],
    });
    expect(resolved.status).toBe(200);
    await expect.poll(async () => (await states())[site], { timeout: 15_000 }).toBe(before[site]);

    // A click on a marker opens its site.
    await page.locator(`path.site-marker[data-site-id="${site}"]`).click({ force: true });
    await page.waitForURL(new RegExp(`/console/sites/${site}$`));

    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
