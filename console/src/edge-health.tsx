import type { StreamEvents } from './api-schema.js';
import { ago, formatTime } from './format.js';

// The Sparkplug edge nodes and devices of a site, online or offline and since when: from the stream's
// snapshot (`Edge`, the state the service keeps) and its `edge` events (a birth or a death since).

export type EdgeState = StreamEvents['snapshot']['sites'][number]['Edge'][number];

export const edgeKey = (e: { groupId: string; edgeNodeId: string; deviceId: string | null }) =>
  `${e.groupId}/${e.edgeNodeId}/${e.deviceId ?? ''}`;

/** The states after an `edge` event (a state that does not change keeps its `since`). */
export function applyEdgeEvent(
  states: Map<string, EdgeState>,
  e: StreamEvents['edge'],
  now = new Date().toISOString(),
): Map<string, EdgeState> {
  const key = edgeKey(e);
  const before = states.get(key);
  const since = before && before.online === e.online ? before.since : now;
  return new Map(states).set(key, {
    groupId: e.groupId,
    edgeNodeId: e.edgeNodeId,
    deviceId: e.deviceId,
    online: e.online,
    since,
  });
}

export function EdgeHealth({ states }: { states: Map<string, EdgeState> }) {
  const list = [...states.values()].sort((a, b) => edgeKey(a).localeCompare(edgeKey(b)));
  if (!list.length)
    return <p class="muted">No Sparkplug edge node has reported equipment of this site.</p>;
  const offline = list.filter((e) => !e.online).length;
  return (
    <>
      <p class="muted" role="status">
        {offline ? `${offline} of ${list.length} offline` : `All ${list.length} online`}
      </p>
      <table class="edge-health">
        <thead>
          <tr>
            <th scope="col">Edge node</th>
            <th scope="col">Device</th>
            <th scope="col">State</th>
            <th scope="col">Since</th>
          </tr>
        </thead>
        <tbody>
          {list.map((e) => (
            <tr key={edgeKey(e)} data-online={e.online ? 'true' : 'false'}>
              <td>
                {e.groupId} / {e.edgeNodeId}
              </td>
              <td>{e.deviceId ?? <span class="muted">the node itself</span>}</td>
              <td>
                {e.online ? (
                  <span class="badge ok">Online</span>
                ) : (
                  <span class="badge bad">Offline</span>
                )}
              </td>
              <td title={formatTime(e.since)}>{ago(e.since)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
