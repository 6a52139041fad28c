import { expect, it } from 'vitest';
import { makeJob, type Job, type Role } from '../../src/telemetry/jobs.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { parseGeneric } from '../../src/telemetry/upload.js';
import { TelemetryWriter, type StoredByKind } from '../../src/telemetry/writer.js';
import { describeEachBackend } from '../helper.js';
import { mixed, suiteApp } from './fixtures.js';

// What the writer reports as stored after each commit, per job and kind (the ingest counter of the
// metrics): exact for mixed-kind jobs whether logs are inserted or upserted, and for grouped jobs.

describeEachBackend('records stored per kind', (backend) => {
  const t = suiteApp(backend);
  const minute = (m: number) => new Date(Date.UTC(2025, 2, 1) + m * 60_000).toISOString();

  async function writer() {
    const reports: { job: Job; stored: StoredByKind }[] = [];
    const partitions = new Partitions(t.ctx.db);
    await partitions.cover(Date.now());
    const w = new TelemetryWriter(t.ctx.db, partitions, {
      group: true,
      maxInFlight: 1,
      maxPerLane: 1,
      onStored: (job, stored) => reports.push({ job, stored }),
    });
    return { w, reports };
  }
  /** A generic upload's job, its sites found as the directory would (demo ids: site * 10000 + n). */
  const job = (role: Role, records: Record<string, unknown>[], source?: 'http' | 'mqtt') => {
    const entries = parseGeneric(role, records).map((e) => ({
      ...e,
      site: Math.floor(e.id / 10_000),
    }));
    return makeJob(role, entries, [1], source);
  };
  const soon = () => Date.now() + 10_000;

  it('counts each kind of a mixed upload, inserted, replayed or partly changed', async () => {
    const { w, reports } = await writer();
    const first = mixed(minute(0), 1);
    expect(await w.submit(job('log', first), soon())).toMatchObject({ stored: 4 });
    // A replay (its plain INSERT meets stored keys and is upserted): nothing stored.
    expect(await w.submit(job('log', first), soon())).toMatchObject({ stored: 0 });
    // Two of the four changed (upserted: the writer upserts for a while after a conflict).
    const changed: Record<string, unknown>[] = mixed(minute(0), 1);
    changed[0] = { ...changed[0], value: 99 };
    changed[2] = { ...changed[2], running: true };
    expect(await w.submit(job('log', changed, 'mqtt'), soon())).toMatchObject({ stored: 2 });
    expect(reports.map((r) => [r.job.source, r.stored])).toEqual([
      ['http', { sensor: 1, meter: 1, pump: 1, tank: 1 }],
      ['http', {}],
      ['mqtt', { sensor: 1, pump: 1 }],
    ]);
  });

  it('counts the jobs of one group each on their own', async () => {
    const { w, reports } = await writer();
    const a = job('reading', mixed(minute(10), 1).slice(0, 2)); // sensor, meter
    const b = job('reading', mixed(minute(10), 1).slice(2)); // pump, tank
    const c = job('reading', mixed(minute(5), 1).slice(0, 1)); // the sensor again, but older: not stored
    const counts = await Promise.all([a, b, c].map((j) => w.submit(j, soon())));
    expect(counts.map((n) => n.stored)).toEqual([2, 2, 0]);
    const byJob = new Map(reports.map((r) => [r.job, r.stored]));
    expect([a, b, c].map((j) => byJob.get(j))).toEqual([
      { sensor: 1, meter: 1 },
      { pump: 1, tank: 1 },
      {},
    ]);
  });
});
