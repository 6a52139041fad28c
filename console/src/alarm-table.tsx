import { useState } from 'preact/hooks';
import { post } from './api.js';
import type { Alarm, PostBody } from './api-schema.js';
import { isShelved } from './alarm-store.js';
import { ago, formatNumber, formatTime } from './format.js';
import { can, useMe, type Me } from './me.js';
import { ALARM_KIND } from './model.js';
import { Link, withQuery } from './router.js';

// Alarms with what a person may do to each, as the client's role allows: acknowledge, shelve for a
// while, unshelve and resolve, each with a note kept in the alarm's journal. Unacknowledged alarms
// stand out (a bar, bold text and the word itself, not colour alone). Used by the site page, the
// alarms page and an alarm's journal page.

/** An alarm of the active list, or of the alarm list (which adds how it was resolved). */
export type AnyAlarm = Alarm & {
  ResolvedAt?: string | null;
  ResolvedBy?: string | null;
  ResolveNote?: string | null;
};

interface Props {
  alarms: AnyAlarm[];
  /** Equipment names by "kind:id", when known. */
  names?: Map<string, string>;
  /** Site names by id: shows a Site column. */
  sites?: Map<number, string>;
  onResolved: (alarm: AnyAlarm) => void;
  /** After an acknowledge, shelve or unshelve went through (the stream brings the new record). */
  onChanged?: (alarm: AnyAlarm) => void;
  /** Whether each alarm links to its journal (not on the journal's own page). */
  journalLinks?: boolean;
  empty?: string;
}

export const SHELVE_MINUTES = [15, 30, 60, 120, 240, 480, 1440];
const duration = (m: number) => (m < 60 ? `${m} min` : `${m / 60} h`);

/** The equipment an alarm is about, by name when known. */
export function equipmentOf(
  a: Pick<Alarm, 'EquipmentTypeID' | 'EquipmentID'>,
  names?: Map<string, string>,
): string {
  const kind = a.EquipmentTypeID ? ALARM_KIND[a.EquipmentTypeID] : undefined;
  if (a.EquipmentTypeID === null) return 'Site';
  return kind
    ? (names?.get(`${kind}:${a.EquipmentID}`) ?? `${kind} ${a.EquipmentID}`)
    : `equipment ${a.EquipmentTypeID}:${a.EquipmentID}`;
}

/** The link to an alarm's journal page. */
export const journalHref = (a: Pick<Alarm, 'SiteID' | 'SiteAlarmLogID' | 'RaisedAt'>) =>
  withQuery('/alarms/journal', { site: a.SiteID, id: a.SiteAlarmLogID, raised: a.RaisedAt });

export function AlarmTable({ alarms, empty = 'No active alarms.', ...rest }: Props) {
  const me = useMe();
  if (!alarms.length) return <p class="ok-text">{empty}</p>;
  const acts = can(me, 'operate') || can(me, 'resolve');
  return (
    <div class="scroll">
      <table class="alarms">
        <thead>
          <tr>
            <th scope="col">Severity</th>
            {rest.sites && <th scope="col">Site</th>}
            <th scope="col">Alarm</th>
            <th scope="col">Equipment</th>
            <th scope="col">Value</th>
            <th scope="col">Last seen</th>
            <th scope="col">State</th>
            {acts && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {alarms.map((a) => (
            <AlarmRow key={a.SiteAlarmLogID} alarm={a} me={me} acts={acts} {...rest} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

type Action = 'acknowledge' | 'shelve' | 'unshelve' | 'resolve';
const DONE: Record<Action, string> = {
  acknowledge: 'Acknowledged.',
  shelve: 'Shelved.',
  unshelve: 'Unshelved.',
  resolve: 'Resolved.',
};

/** What an alarm's state is, in words: acknowledged or not, shelved, resolved. */
export function AlarmState({ alarm: a }: { alarm: AnyAlarm }) {
  return (
    <>
      {a.AcknowledgedAt ? (
        <span title={formatTime(a.AcknowledgedAt)}>
          Acknowledged by {a.AcknowledgedBy ?? 'the service'} {ago(a.AcknowledgedAt)}
        </span>
      ) : (
        <span class="badge unack">Unacknowledged</span>
      )}
      {isShelved(a) && (
        <>
          <br />
          <span class="badge shelved">Shelved until {formatTime(a.ShelvedUntil)}</span>
        </>
      )}
      {a.ResolvedAt && (
        <>
          <br />
          <span title={formatTime(a.ResolvedAt)}>
            Resolved by {a.ResolvedBy ?? 'the service'} {ago(a.ResolvedAt)}
          </span>
        </>
      )}
    </>
  );
}

function AlarmRow({
  alarm: a,
  names,
  sites,
  onResolved,
  onChanged,
  journalLinks = true,
  me,
  acts,
}: { alarm: AnyAlarm; me: Me | undefined; acts: boolean } & Omit<Props, 'alarms' | 'empty'>) {
  const [note, setNote] = useState('');
  const [minutes, setMinutes] = useState(60);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const noteId = `note-${a.SiteAlarmLogID}`;
  const minutesId = `shelve-${a.SiteAlarmLogID}`;
  const resolved = !!a.ResolvedAt;
  const operate = can(me, 'operate');
  const shelved = isShelved(a);
  const offered =
    (operate && (!a.AcknowledgedAt || !resolved)) || (can(me, 'resolve') && !resolved);

  const act = async (action: Action) => {
    setBusy(true);
    setError('');
    setDone('');
    const body: PostBody<'/v1/alarms/acknowledge'> = {
      siteId: a.SiteID,
      alarms: [{ SiteAlarmLogID: a.SiteAlarmLogID, note: note.trim() || undefined }],
    };
    try {
      if (action === 'resolve') await post('/v1/edge/alarms/resolve', body);
      else if (action === 'shelve') await post('/v1/alarms/shelve', { ...body, minutes });
      else if (action === 'acknowledge') await post('/v1/alarms/acknowledge', body);
      else await post('/v1/alarms/unshelve', body);
      setNote('');
      setDone(DONE[action]);
      if (action === 'resolve') onResolved(a);
      else onChanged?.(a);
    } catch (err) {
      setError((err as Error).message);
    }
    setBusy(false);
  };
  const what = `${a.AlarmType} alarm ${a.SiteAlarmLogID}`;

  return (
    <tr class={a.AcknowledgedAt ? undefined : 'unacked'}>
      <td>
        <span class={`badge sev-${a.Severity}`}>{a.Severity}</span>
      </td>
      {sites && <td data-label="Site">{sites.get(a.SiteID) ?? `Site ${a.SiteID}`}</td>}
      <td>
        <strong>{a.AlarmType}</strong>
        <br />
        {a.Message}
        {a.Occurrences > 1 && <span class="muted"> ({a.Occurrences} times)</span>}
        {journalLinks && can(me, 'read') && (
          <>
            <br />
            <Link href={journalHref(a)} aria-label={`Journal of ${what}`}>
              Journal
            </Link>
          </>
        )}
      </td>
      <td data-label="Equipment">{equipmentOf(a, names)}</td>
      <td class="num" data-label="Value">
        {formatNumber(a.Value)}
      </td>
      <td title={formatTime(a.LastSeen)} data-label="Last seen">
        {ago(a.LastSeen)}
      </td>
      <td data-label="State">
        <AlarmState alarm={a} />
      </td>
      {acts && !offered && <td class="resolve">{done && <p class="ok-text">{done}</p>}</td>}
      {acts && offered && (
        <td class="resolve">
          <label class="sr-only" for={noteId}>
            Note for {what}
          </label>
          <input
            id={noteId}
            placeholder="Note (optional)"
            maxLength={1000}
            value={note}
            onInput={(e) => setNote(e.currentTarget.value)}
          />
          <div class="buttons">
            {operate && !a.AcknowledgedAt && (
              <button type="button" disabled={busy} onClick={() => act('acknowledge')}>
                Acknowledge
              </button>
            )}
            {operate && !resolved && (
              <span class="shelve">
                <label class="sr-only" for={minutesId}>
                  Shelve {what} for
                </label>
                <select
                  id={minutesId}
                  value={minutes}
                  onChange={(e) => setMinutes(Number(e.currentTarget.value))}
                >
                  {SHELVE_MINUTES.map((m) => (
                    <option key={m} value={m}>
                      {duration(m)}
                    </option>
                  ))}
                </select>
                <button type="button" disabled={busy} onClick={() => act('shelve')}>
                  {shelved ? 'Shelve again' : 'Shelve'}
                </button>
              </span>
            )}
            {operate && shelved && (
              <button type="button" disabled={busy} onClick={() => act('unshelve')}>
                Unshelve
              </button>
            )}
            {can(me, 'resolve') && !resolved && (
              <button type="button" disabled={busy} onClick={() => act('resolve')}>
                Resolve
              </button>
            )}
          </div>
          {done && (
            <p class="ok-text" role="status">
              {done}
            </p>
          )}
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
        </td>
      )}
    </tr>
  );
}
