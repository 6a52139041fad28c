import { describe, expect, it } from 'vitest';
import { openPage, shot, signIn, useServiceAndBrowser } from './harness.js';

// Who sees what, and how: a client sees only its sites, an ended token returns to the sign-in page
// with a plain message, the keyboard reaches everything with a visible focus, a phone is usable.

describe('the console: access, keyboard and phone', () => {
  const ctx = useServiceAndBrowser();

  const admin = async (method: string, path: string, body: unknown) => {
    const res = await fetch(ctx.svc.base + path, {
      method,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await ctx.svc.token()}`,
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };

  it('shows a client only its own sites, and sends it back to sign in with a message when its token stops working', async () => {
    const created = await admin('POST', '/v1/admin/clients', { clientId: 'viewer', siteIds: [2] });
    expect(created.status).toBe(201);
    const { page, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc, 'viewer', created.body.clientSecret);
    await page.getByRole('link', { name: 'Mentone Tank Battery' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    // A wrong secret is refused with a message, on the sign-in page.
    const other = await openPage(ctx.browser);
    await other.page.goto(`${ctx.svc.base}/console/`);
    await other.page.getByLabel('Client ID').fill('viewer');
    await other.page.getByLabel('Client secret').fill('not-the-secret');
    await other.page.getByRole('button', { name: 'Sign in' }).click();
    await other.page
      .getByRole('alert')
      .filter({ hasText: 'Unknown client ID or wrong secret.' })
      .waitFor();
    await other.context.close();

    // The client is disabled: its token answers 401, and the next page it opens says so.
    expect((await admin('PATCH', '/v1/admin/clients/viewer', { disabled: true })).status).toBe(200);
    await page.getByRole('link', { name: 'Alarms' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your session has ended' }).waitFor();
    await page.getByLabel('Client ID').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('site-monitor.session'))).toBeNull();
    await context.close();
  });

  it('marks a site that has not reported for over an hour as silent', async () => {
    const imported = await admin('POST', '/v1/admin/import', {
      sites: [
        { SiteID: 90, Name: 'Quiet Creek', CompanyID: 1, Active: true, TimeZone: 'America/Denver' },
      ],
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const { page, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(5);
    expect(await rows.filter({ hasText: 'Pecos SWD 1' }).textContent()).not.toContain('Silent');
    await page.getByLabel('Search by name').fill('quiet');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/Quiet Creek.*Silent\s*never/);

    // Paging, two sites a page: five sites, three pages, each site once.
    await page.goto(`${ctx.svc.base}/console/?perPage=2`);
    const seen: string[] = [];
    for (let n = 1; n <= 3; n++) {
      await page.getByText(`Page ${n} of 3`).waitFor();
      await expect.poll(() => rows.count()).toBe(n < 3 ? 2 : 1);
      seen.push(...(await rows.locator('td:first-child').allTextContents()));
      if (n < 3) await page.getByRole('button', { name: 'Next' }).click();
    }
    expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    expect(new Set(seen).size).toBe(5);
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('Page 2 of 3').waitFor();
    expect(page.url()).toContain('page=2');
    await context.close();
  });

  it('is usable from the keyboard alone, with a visible focus', async () => {
    const { page, context } = await openPage(ctx.browser);
    await page.goto(`${ctx.svc.base}/console/`);
    await page.getByLabel('Client ID').waitFor();
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        const style = getComputedStyle(el);
        return {
          id: el.id,
          text: el.textContent?.trim(),
          outline: style.outlineStyle,
          width: parseFloat(style.outlineWidth),
        };
      });
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ id: 'client-id', outline: 'solid' });
    expect((await focused()).width).toBeGreaterThanOrEqual(2);
    await page.keyboard.type('demo');
    await page.keyboard.press('Tab');
    expect((await focused()).id).toBe('client-secret');
    await page.keyboard.type(ctx.svc.secret);
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ text: 'Sign in', outline: 'solid' });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sites' }).waitFor();
    // Tab through the header to the first site's link and open it with Enter.
    // The header, the banner, the map's controls and markers come first: about 25 stops, more
    // when the map has drawn more markers, so the bound is generous and the list is waited for.
    await page.getByRole('link', { name: 'Kermit Disposal' }).waitFor();
    for (let i = 0; i < 100 && (await focused()).text !== 'Kermit Disposal'; i++)
      await page.keyboard.press('Tab');
    expect((await focused()).text).toBe('Kermit Disposal');
    expect((await focused()).outline).toBe('solid');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Kermit Disposal' }).waitFor();
    await context.close();
  });

  it('fits a 390-pixel phone: no sideways scrolling of the page, every control reachable', async () => {
    const { page, context, errors } = await openPage(ctx.browser, 390, 844);
    await signIn(page, ctx.svc);
    const overflow = () =>
      page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
    expect(await overflow()).toBeLessThanOrEqual(0);
    for (const name of ['Sites', 'Alarms', 'Charts', 'Tickets', 'Sign out']) {
      const box = await page
        .getByRole(name === 'Sign out' ? 'button' : 'link', { name, exact: true })
        .boundingBox();
      expect(box, name).not.toBeNull();
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(390);
    }
    await shot(page, 'phone-sites');
    await page.getByRole('link', { name: 'Pecos SWD 1' }).click();
    await page.getByText('Live', { exact: true }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    const resolve = page.getByRole('button', { name: 'Resolve' }).first();
    await resolve.scrollIntoViewIfNeeded();
    const box = await resolve.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await shot(page, 'phone-site');
    await page.goto(`${ctx.svc.base}/console/charts?site=1&kind=tank&id=10501&range=30d`);
    await page.locator('.chart canvas').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(Number(await page.locator('.chart').getAttribute('data-points'))).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
