import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { EdgeNode, bindingsDocument } from '../scripts/simulate-edge.js';
import { describeWith, mqttUrl } from '../test/needs.js';
import { openPage, shot, signIn, useServiceAndBrowser } from './harness.js';

// Edge health on the site page: a Sparkplug node and its device, online or offline as their births
// and deaths say, kept across a reload (the service keeps their state); and a live indicator that
// tells the truth: "Stale" once neither an event nor a heartbeat has come for two heartbeats, "Live"
// again once the stream is back.

const SITE = 'Pecos SWD 1';
const SENSORS = [10100, 10101]; // Pecos SWD 1's first sensors
const HEARTBEAT_MS = 1000;

describeWith(['mosquitto'], 'edge health in Chromium', () => {
  const id = `b${randomBytes(4).toString('hex')}`;
  const ctx = useServiceAndBrowser({
    MQTT_URL: mqttUrl(),
    MQTT_HOST_ID: id,
    MQTT_CLIENT_ID: `${id}-svc`,
    MQTT_TOPIC_PREFIX: `${id}/`,
    MQTT_SESSION_EXPIRY_S: '60',
    STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS),
  });

  it('shows each edge node and device online or offline, live and after a reload, and says when the stream goes stale', async () => {
    const group = `g-${id}`;
    const imported = await ctx.svc.post(
      '/v1/admin/import',
      bindingsDocument(group, [{ node: 'n1', devices: ['d1'] }], 2, SENSORS),
    );
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);

    const { page, errors, context } = await openPage(ctx.browser);
    await signIn(page, ctx.svc);
    await page.getByRole('link', { name: SITE }).click();
    await page.getByRole('heading', { name: SITE }).waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    await page.getByText('No Sparkplug edge node has reported equipment of this site.').waitFor();

    // Births: the node and its device appear online, without a reload.
    const node = new EdgeNode({
      url: mqttUrl(),
      prefix: `${id}/`,
      group,
      node: 'n1',
      devices: ['d1'],
      metrics: 2,
    });
    try {
      await node.connect();
      const row = (device: string) =>
        page.locator('table.edge-health tbody tr').filter({ hasText: device });
      await expect
        .poll(() => row('the node itself').textContent(), { timeout: 15_000 })
        .toContain('Online');
      await expect.poll(() => row('d1').textContent(), { timeout: 15_000 }).toContain('Online');
      await page.getByText('All 2 online').waitFor();

      // The device dies: offline, live; and still offline after a reload (from the snapshot).
      await node.deviceDeath(0);
      await expect.poll(() => row('d1').textContent(), { timeout: 15_000 }).toContain('Offline');
      expect(await row('the node itself').textContent()).toContain('Online');
      await page.getByText('1 of 2 offline').waitFor();
      await shot(page, 'site-edge');
      await page.reload();
      await page.getByRole('heading', { name: SITE }).waitFor();
      await expect.poll(() => row('d1').textContent(), { timeout: 15_000 }).toContain('Offline');
      expect(await row('the node itself').textContent()).toContain('Online');
    } finally {
      await node.close();
    }

    // The service stops answering (SIGSTOP): no heartbeat comes, the indicator says so within
    // about two heartbeats instead of staying "Live"; once it answers again, "Live" again.
    const live = page.locator('.live');
    await expect.poll(() => live.textContent()).toBe('Live');
    ctx.svc.server.child.kill('SIGSTOP');
    try {
      await expect.poll(() => live.textContent(), { timeout: 15_000 }).toMatch(/^Stale/);
    } finally {
      ctx.svc.server.child.kill('SIGCONT');
    }
    await expect.poll(() => live.textContent(), { timeout: 30_000 }).toBe('Live');
    expect(errors).toEqual([]);
    await context.close();
  });
});
