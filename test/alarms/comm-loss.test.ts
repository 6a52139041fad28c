import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { checkCommunicationLoss } from '../../src/alarms/rules/comm-loss.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { poster, SENSOR } from '../telemetry/fixtures.js';
import { until } from '../wait.js';
import { alarmsOf, secondsAgo } from './rules-fixtures.js';

// Communication loss (contract 16): a site silent past its CommLossMinutes (counted from the later
// of its last communication and the service's last start) gets one COMM_LOSS alarm, resolved by its
// next data; the site record carries CommLossMinutes.

describeEachBackend('communication loss', (backend) => {
  let ctx: TestContext;
  let token: string;
  beforeAll(async () => {
    ctx = await startApp(backend);
    token = await ctx.token();
  });
  afterAll(async () => ctx?.close());

  const silence = (siteId: number, minutes: number) =>
    ctx.db.query(
      `UPDATE sites SET last_communication = now() - $2 * interval '1 minute' WHERE site_id = $1`,
      [siteId, minutes],
    );
  const started = (minutesAgo: number) =>
    ctx.db.query(`UPDATE service_starts SET started_at = now() - $1 * interval '1 minute'`, [
      minutesAgo,
    ]);
  /** Alarms of earlier tests are left resolved (the record of every alarm stays): only those after this id count. */
  let before = 0;
  const commLoss = async () =>
    (await alarmsOf(ctx.db, 'COMM_LOSS'))
      .filter((a) => Number(a.id) > before)
      .map((a) => ({
        site: a.site_id,
        source: a.source,
        open: a.resolved_at === null,
        by: a.resolved_by,
      }));

  beforeEach(async () => {
    await ctx.db.query(`UPDATE sites SET last_communication = NULL, comm_loss_minutes = NULL`);
    await ctx.db.query(`DELETE FROM site_comm_loss`);
    await ctx.db.query(
      `UPDATE site_alarms SET resolved_at = now(), resolved_by = 'test' WHERE alarm_type = 'COMM_LOSS' AND resolved_at IS NULL`,
    );
    const [{ id }] = await ctx.db.query<{ id: string }>(
      `SELECT COALESCE(max(alarm_id), 0)::text AS id FROM site_alarms`,
    );
    before = Number(id);
    await started(24 * 60);
  });

  it('the site record carries CommLossMinutes (default 60), set by the provisioning document', async () => {
    const list = async () =>
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/v1/sites?page=1&perPage=10',
          headers: bearer(token),
        })
      ).json().data as { SiteID: number; CommLossMinutes: number }[];
    expect((await list()).find((s) => s.SiteID === 1)?.CommLossMinutes).toBe(60);
    const [site] = await ctx.db.query<Record<string, unknown>>(
      `SELECT site_id AS "SiteID", name AS "Name", company_id AS "CompanyID", active AS "Active" FROM sites WHERE site_id = 1`,
    );
    await importDocument(ctx.db, { sites: [{ ...site, CommLossMinutes: 15 }] });
    expect((await list()).find((s) => s.SiteID === 1)?.CommLossMinutes).toBe(15);
    await expect(
      importDocument(ctx.db, { sites: [{ ...site, CommLossMinutes: 10_081 }] }),
    ).rejects.toThrow(/sites\[0\]\.CommLossMinutes/);
    await importDocument(ctx.db, { sites: [site] });
    expect((await list()).find((s) => s.SiteID === 1)?.CommLossMinutes).toBe(60);
  });

  it('raises once per silence past the threshold, never for a site that never communicated, is off at 0', async () => {
    await silence(1, 61);
    await silence(2, 61);
    await ctx.db.query(`UPDATE sites SET comm_loss_minutes = 0 WHERE site_id = 2`);
    await silence(3, 59);
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ raised: 1 });
    expect(await commLoss()).toEqual([{ site: 1, source: 'communication', open: true, by: null }]);
    const [a] = await ctx.db.query<{
      first_seen: Date;
      last_communication: Date;
      severity: string;
    }>(
      `SELECT a.first_seen, s.last_communication, a.severity FROM site_alarms a JOIN sites s USING (site_id) WHERE alarm_type = 'COMM_LOSS'`,
    );
    expect(a.first_seen.getTime() - a.last_communication.getTime()).toBe(60 * 60_000);
    expect(a.severity).toBe('major');
    // Checked again: nothing more. Resolved by hand while still silent: not raised again.
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ raised: 0 });
    await ctx.db.query(
      `UPDATE site_alarms SET resolved_at = now(), resolved_by = 'op' WHERE alarm_type = 'COMM_LOSS' AND resolved_at IS NULL`,
    );
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ raised: 0 });
  });

  it('counts silence from the service start, so an outage of the service raises nothing by itself', async () => {
    await silence(1, 24 * 60);
    await started(30);
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ raised: 0 });
    await started(61);
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ raised: 1 });
  });

  it('the next data of the site resolves it, by "communication"', async () => {
    await silence(1, 120);
    await checkCommunicationLoss(ctx.db);
    expect(await commLoss()).toMatchObject([{ site: 1, open: true }]);
    const post = poster(ctx, token);
    expect(
      (await post('readings/sensor', { sensorID: SENSOR, value: 1, timestamp: secondsAgo(1) }))
        .status,
    ).toBe(201);
    await until(async () => !(await commLoss())[0].open, 'the alarm resolved by the data');
    expect(await commLoss()).toEqual([
      { site: 1, source: 'communication', open: false, by: 'communication' },
    ]);
    // A later silence is a new one.
    await silence(1, 65);
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ raised: 1 });
    expect((await commLoss()).map((c) => c.open)).toEqual([false, true]);
    // Data whose events the evaluator missed: the check itself resolves what it outlived.
    await ctx.db.query(`UPDATE sites SET last_communication = now() WHERE site_id = 1`);
    expect(await checkCommunicationLoss(ctx.db)).toMatchObject({ resolved: 1 });
  });

  it('several checks at once raise it once', async () => {
    await silence(1, 90);
    await silence(3, 90);
    const results = await Promise.all([1, 2, 3].map(() => checkCommunicationLoss(ctx.db)));
    expect(results.reduce((n, r) => n + r.raised, 0)).toBe(2);
    expect((await commLoss()).map((c) => c.site).sort()).toEqual([1, 3]);
  });
});
