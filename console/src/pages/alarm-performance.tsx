import { useMemo } from 'preact/hooks';
import { post } from '../api.js';
import type { PostAnswer } from '../api-schema.js';
import { equipmentOf } from '../alarm-table.js';
import { Chart } from '../chart.js';
import { browserZone, formatNumber, formatTime } from '../format.js';
import { Status, useLoad } from '../load.js';
import { loadSiteEquipment } from '../model.js';
import { Link, navigate, useRoute, withQuery } from '../router.js';

type Kpis = PostAnswer<'/v1/alarms/kpis'>[number];
type KeyCount = Kpis['TopAlarms'][number];

const RANGES: Record<string, { label: string; ms: number }> = {
  '24h': { label: '24 h', ms: 86_400_000 },
  '7d': { label: '7 d', ms: 7 * 86_400_000 },
  '30d': { label: '30 d', ms: 30 * 86_400_000 },
};
/** EEMUA 191: more than 10 alarms raised in 10 minutes is a flood. */
const FLOOD = 10;

function duration(seconds: number | null): string {
  if (seconds === null) return 'none acknowledged';
  if (seconds < 60) return `${formatNumber(seconds, 0)} s`;
  if (seconds < 3600) return `${formatNumber(seconds / 60, 1)} min`;
  return `${formatNumber(seconds / 3600, 1)} h`;
}

/**
 * A site's alarm performance over the last day, week or month (POST /v1/alarms/kpis, ISA-18.2 and
 * EEMUA 191 figures): alarms raised per 10 minutes over time, the floods, the alarms raised most
 * and those that chatter.
 */
export function AlarmPerformancePage({ siteId }: { siteId: number }) {
  const { query } = useRoute();
  const range = RANGES[query.get('range') ?? ''] ? query.get('range')! : '24h';
  const load = useLoad(
    async (signal) => {
      const end = Date.now();
      const [kpis, config] = await Promise.all([
        post(
          '/v1/alarms/kpis',
          {
            siteIds: [siteId],
            start: new Date(end - RANGES[range].ms).toISOString(),
            end: new Date(end).toISOString(),
            series: '10m',
          },
          signal,
        ),
        loadSiteEquipment(siteId, signal),
      ]);
      return { kpis: kpis[0], config };
    },
    [siteId, range],
  );
  const names = useMemo(
    () => new Map((load.data?.config.equipment ?? []).map((e) => [`${e.kind}:${e.id}`, e.name])),
    [load.data],
  );
  const series = useMemo(() => {
    const s = load.data?.kpis.Series ?? [];
    return {
      x: s.map((w) => Date.parse(w.Start) / 1000),
      series: [
        { label: 'Alarms raised', values: s.map((w) => w.Raised), color: '#1f5fbf' },
        { label: 'Flood threshold', values: s.map(() => FLOOD), color: '#a1170f', dashed: true },
      ],
      floods: s.filter((w) => w.Raised > FLOOD).reverse(),
    };
  }, [load.data]);
  const siteName = load.data?.config.site.Name ?? `Site ${siteId}`;

  return (
    <section>
      <p class="crumbs">
        <Link href="/">Sites</Link> › <Link href={`/sites/${siteId}`}>{siteName}</Link> › alarm
        performance
      </p>
      <h1>Alarm performance of {siteName}</h1>
      <div class="actions" role="group" aria-label="Range">
        {Object.entries(RANGES).map(([key, r]) => (
          <button
            key={key}
            type="button"
            aria-pressed={key === range}
            onClick={() =>
              navigate(withQuery(`/sites/${siteId}/alarm-performance`, { range: key }), {
                replace: true,
              })
            }
          >
            {r.label}
          </button>
        ))}
      </div>
      <Status load={load} what="the alarm performance">
        {({ kpis }) => (
          <>
            <dl class="figures">
              <div>
                <dt>Alarms raised</dt>
                <dd>{kpis.Raised}</dd>
              </div>
              <div>
                <dt>Average per 10 minutes</dt>
                <dd>{formatNumber(kpis.AveragePer10Min, 2)}</dd>
              </div>
              <div>
                <dt>Most in 10 minutes</dt>
                <dd>{kpis.Peak10Min}</dd>
              </div>
              <div>
                <dt>Time in flood</dt>
                <dd>{formatNumber(kpis.FloodPercent, 1)} %</dd>
              </div>
              <div>
                <dt>Standing alarms</dt>
                <dd>{kpis.Standing}</dd>
              </div>
              <div>
                <dt>Mean time to acknowledge</dt>
                <dd>{duration(kpis.MeanSecondsToAcknowledge)}</dd>
              </div>
            </dl>
            <p class="muted">
              EEMUA 191 calls an average of about 1 alarm per 10 minutes very likely to be
              acceptable, and more than {FLOOD} in 10 minutes a flood.
            </p>

            <h2>Alarm rate</h2>
            {kpis.Raised ? (
              <figure>
                <figcaption>Alarms raised per 10 minutes, {RANGES[range].label}</figcaption>
                <Chart
                  x={series.x}
                  series={series.series}
                  zone={browserZone()}
                  units="alarms"
                  label={`Alarm rate of ${siteName}`}
                />
              </figure>
            ) : (
              <p class="muted">No alarm was raised in this range.</p>
            )}

            <h2>Floods</h2>
            {series.floods.length ? (
              <div class="scroll">
                <table class="floods">
                  <thead>
                    <tr>
                      <th scope="col">10 minutes from</th>
                      <th scope="col">Alarms raised</th>
                    </tr>
                  </thead>
                  <tbody>
                    {series.floods.slice(0, 50).map((w) => (
                      <tr key={w.Start}>
                        <td>{formatTime(w.Start)}</td>
                        <td class="num">{w.Raised}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="ok-text">No flood in this range.</p>
            )}

            <h2>Top alarms</h2>
            <KeyTable rows={kpis.TopAlarms} names={names} empty="No alarm was raised." />
            <h2>Chattering alarms</h2>
            <p class="muted">Raised 3 or more times within 60 seconds.</p>
            <KeyTable rows={kpis.Chattering} names={names} empty="No alarm chattered." />
          </>
        )}
      </Status>
    </section>
  );
}

function KeyTable({
  rows,
  names,
  empty,
}: {
  rows: KeyCount[];
  names: Map<string, string>;
  empty: string;
}) {
  if (!rows.length) return <p class="ok-text">{empty}</p>;
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Alarm</th>
            <th scope="col">Equipment</th>
            <th scope="col">Times raised</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.EquipmentTypeID}:${r.EquipmentID}:${r.AlarmType}`}>
              <td>{r.AlarmType}</td>
              <td>{equipmentOf(r, names)}</td>
              <td class="num">{r.Count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
