import { post } from '../api.js';
import type { PostAnswer } from '../api-schema.js';
import { useAlarmEvents } from '../alarm-store.js';
import { AlarmTable, equipmentOf, type AnyAlarm } from '../alarm-table.js';
import { formatInstant, formatTime } from '../format.js';
import { Status, useLoad } from '../load.js';
import { loadSiteEquipment } from '../model.js';
import { Link, useRoute, withQuery } from '../router.js';

type Entry = PostAnswer<'/v1/alarms/journal'>['data'][number];

const DAY = 86_400_000;
/** The journal and alarm list answer at most 366 days at a time. */
const MAX_SPAN = 366 * DAY;

const EVENT_TEXT: Record<Entry['Event'], string> = {
  raised: 'Raised',
  acknowledged: 'Acknowledged',
  shelved: 'Shelved',
  unshelved: 'Unshelved',
  resolved: 'Resolved',
  notified: 'Notified',
  notification_failed: 'Notification failed',
};

/** Who made a change, in words. */
function who(e: Entry): string {
  if (e.By === null)
    return e.Event === 'unshelved' ? 'the service (the shelf ended)' : 'the service';
  if (e.By === 'communication') return 'the service (communication)';
  if (e.By.startsWith('rule:')) return `limit rule ${e.By.slice(5)}`;
  return e.By;
}

/** One alarm (from the alarm list, resolved or not) and every change of it: who, when, what, why. */
export function JournalPage() {
  const { query } = useRoute();
  const siteId = Number(query.get('site')) || 0;
  const id = query.get('id') ?? '';
  const raised = Date.parse(query.get('raised') ?? '');

  const load = useLoad(
    async (signal) => {
      if (!siteId || !/^\d{1,19}$/.test(id)) throw new Error('this address names no alarm');
      const end = Date.now() + 60_000;
      // From a minute before the alarm was raised (the journal is in the service's time), at most a year back.
      const start = Math.max(end - MAX_SPAN, Number.isFinite(raised) ? raised - 60_000 : 0);
      const entries: Entry[] = [];
      for (let page = 1; page <= 20; page++) {
        const p = await post(
          '/v1/alarms/journal',
          {
            siteIds: [siteId],
            SiteAlarmLogID: id,
            start: new Date(start).toISOString(),
            end: new Date(end).toISOString(),
            page,
            perPage: 500,
          },
          signal,
        );
        entries.push(...p.data);
        if (page >= p.totalPages) break;
      }
      // The alarm itself: the alarm list over the millisecond it was raised.
      const at = Date.parse(entries.find((e) => e.Event === 'raised')?.Time ?? '');
      const alarm = Number.isFinite(at)
        ? (
            await post(
              '/v1/alarms/list',
              {
                siteIds: [siteId],
                start: new Date(at).toISOString(),
                end: new Date(at + 1).toISOString(),
                page: 1,
                perPage: 500,
              },
              signal,
            )
          ).data.find((a) => a.SiteAlarmLogID === id)
        : undefined;
      const config = await loadSiteEquipment(siteId, signal).catch(() => undefined);
      return { entries, alarm: alarm as AnyAlarm | undefined, config };
    },
    [siteId, id],
  );
  // Any change of this alarm, by anyone, shows at once.
  useAlarmEvents(
    (e) => {
      if (e.alarm.SiteAlarmLogID === id) load.reload();
    },
    [id],
  );

  const names = new Map(
    (load.data?.config?.equipment ?? []).map((e) => [`${e.kind}:${e.id}`, e.name] as const),
  );
  const siteName = load.data?.config?.site.Name ?? `Site ${siteId}`;

  return (
    <section>
      <p class="crumbs">
        <Link href="/alarms">Alarms</Link> › <Link href={`/sites/${siteId}`}>{siteName}</Link> ›
        alarm {id}
      </p>
      <h1>Alarm journal</h1>
      <Status load={load} what="the journal">
        {({ entries, alarm }) => (
          <>
            {alarm ? (
              <>
                <p>
                  <strong>{alarm.AlarmType}</strong> on {equipmentOf(alarm, names)} · {alarm.Source}{' '}
                  · raised {formatTime(alarm.RaisedAt)}
                  {alarm.ResolveNote && <> · resolve note: {alarm.ResolveNote}</>}
                </p>
                <AlarmTable
                  alarms={[alarm]}
                  names={names}
                  journalLinks={false}
                  onResolved={load.reload}
                  onChanged={load.reload}
                />
              </>
            ) : (
              <p class="muted">This alarm is not in the alarm list of the last year.</p>
            )}
            <h2>Journal</h2>
            {entries.length ? (
              <div class="scroll">
                <table class="journal">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">What</th>
                      <th scope="col">Who</th>
                      <th scope="col">Note</th>
                    </tr>
                  </thead>
                  <tbody>
                    {entries.map((e) => (
                      <tr key={e.EventID}>
                        <td>{formatInstant(e.Time)}</td>
                        <td>
                          {EVENT_TEXT[e.Event]}
                          {e.Channel && ` (${e.Channel}, step ${e.Step ?? 0})`}
                        </td>
                        <td>{who(e)}</td>
                        <td>{e.Note ?? <span class="muted">—</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No journal entries.</p>
            )}
            <p>
              <Link href={withQuery('/alarms', { site: siteId })}>Active alarms of {siteName}</Link>
            </p>
          </>
        )}
      </Status>
    </section>
  );
}
