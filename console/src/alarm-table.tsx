import { useState } from 'preact/hooks';
import { post } from './api.js';
import type { Alarm } from './api-schema.js';
import { ago, formatNumber, formatTime } from './format.js';
import { ALARM_KIND } from './model.js';

// Active alarms with a note and a Resolve button each; used by the site page and the alarms page.

interface Props {
  alarms: Alarm[];
  /** Equipment names by "kind:id", when known. */
  names?: Map<string, string>;
  /** Site names by id: shows a Site column. */
  sites?: Map<number, string>;
  onResolved: (alarm: Alarm) => void;
}

export function AlarmTable({ alarms, names, sites, onResolved }: Props) {
  if (!alarms.length) return <p class="ok-text">No active alarms.</p>;
  return (
    <div class="scroll">
      <table class="alarms">
        <thead>
          <tr>
            <th scope="col">Severity</th>
            {sites && <th scope="col">Site</th>}
            <th scope="col">Alarm</th>
            <th scope="col">Equipment</th>
            <th scope="col">Value</th>
            <th scope="col">Last seen</th>
            <th scope="col">Resolve</th>
          </tr>
        </thead>
        <tbody>
          {alarms.map((a) => (
            <AlarmRow
              key={a.SiteAlarmLogID}
              alarm={a}
              names={names}
              sites={sites}
              onResolved={onResolved}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AlarmRow({
  alarm: a,
  names,
  sites,
  onResolved,
}: { alarm: Alarm } & Omit<Props, 'alarms'>) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const kind = a.EquipmentTypeID ? ALARM_KIND[a.EquipmentTypeID] : undefined;
  const equipment = kind
    ? (names?.get(`${kind}:${a.EquipmentID}`) ?? `${kind} ${a.EquipmentID}`)
    : 'Site';
  const noteId = `note-${a.SiteAlarmLogID}`;

  const resolve = async () => {
    setBusy(true);
    setError('');
    try {
      await post('/v1/edge/alarms/resolve', {
        siteId: a.SiteID,
        alarms: [{ SiteAlarmLogID: a.SiteAlarmLogID, note: note.trim() || undefined }],
      });
      onResolved(a);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <tr>
      <td>
        <span class={`badge sev-${a.Severity}`}>{a.Severity}</span>
      </td>
      {sites && <td data-label="Site">{sites.get(a.SiteID) ?? `Site ${a.SiteID}`}</td>}
      <td>
        <strong>{a.AlarmType}</strong>
        <br />
        {a.Message}
        {a.Occurrences > 1 && <span class="muted"> ({a.Occurrences} times)</span>}
      </td>
      <td data-label="Equipment">{equipment}</td>
      <td class="num" data-label="Value">
        {formatNumber(a.Value)}
      </td>
      <td title={formatTime(a.LastSeen)} data-label="Last seen">
        {ago(a.LastSeen)}
      </td>
      <td class="resolve">
        <label class="sr-only" for={noteId}>
          Note for {a.AlarmType} alarm {a.SiteAlarmLogID}
        </label>
        <input
          id={noteId}
          placeholder="Note (optional)"
          maxLength={1000}
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
        <button type="button" disabled={busy} onClick={resolve}>
          Resolve
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </td>
    </tr>
  );
}
