import { useEffect, useState } from 'preact/hooks';
import type { Alarm, StreamEvents } from './api-schema.js';
import { openStream, type StreamState } from './stream.js';

// Every active alarm of the client's sites and each site's last communication, kept live by one
// stream of all its sites (GET /v1/stream without siteIds) for as long as someone is signed in:
// the banner of every page, the alarms page and the sites list read it.

type AlarmEvent = StreamEvents['alarm'];

export interface SiteLive {
  lastCommunication: string | null;
  /** Its active alarms, newest first (the order of the active list). */
  alarms: Alarm[];
}

interface State {
  /** Whether the first snapshot has come. */
  ready: boolean;
  sites: Map<number, SiteLive>;
  stream: StreamState;
}

let state: State = { ready: false, sites: new Map(), stream: 'stopped' };
const listeners = new Set<() => void>();
const alarmListeners = new Set<(e: AlarmEvent) => void>();
let stop: (() => void) | undefined;
let users = 0;

const set = (next: Partial<State>) => {
  state = { ...state, ...next };
  for (const l of listeners) l();
};

/** The active list's order: LastSeen, then SiteAlarmLogID (a bigint string), both descending. */
export function newestFirst(a: Alarm, b: Alarm): number {
  if (a.LastSeen !== b.LastSeen) return a.LastSeen < b.LastSeen ? 1 : -1;
  const [x, y] = [a.SiteAlarmLogID, b.SiteAlarmLogID];
  return x.length !== y.length ? y.length - x.length : x < y ? 1 : x > y ? -1 : 0;
}

/** An active-alarm list after an `alarm` event: a resolved alarm leaves it, any other change replaces or adds it. */
export function applyAlarmEvent(list: Alarm[], status: AlarmEvent['status'], alarm: Alarm) {
  const rest = list.filter((a) => a.SiteAlarmLogID !== alarm.SiteAlarmLogID);
  return status === 'resolved' ? rest : [...rest, alarm].sort(newestFirst);
}

const later = (a: string | null, b: string | null) => (!a ? b : !b ? a : a > b ? a : b);

function start() {
  stop = openStream(
    [],
    ({ event, data }) => {
      if (event === 'snapshot') {
        const sites = new Map<number, SiteLive>();
        for (const s of data.sites)
          sites.set(s.SiteID, {
            lastCommunication: s.LastCommunication,
            alarms: [...s.ActiveAlarms].sort(newestFirst),
          });
        set({ ready: true, sites });
        return;
      }
      if (event === 'config' || event === 'edge') return;
      const site = state.sites.get(data.siteId) ?? { lastCommunication: null, alarms: [] };
      let next: SiteLive;
      if (event === 'alarm') {
        next = { ...site, alarms: applyAlarmEvent(site.alarms, data.status, data.alarm) };
      } else {
        const at =
          event === 'reading' ? (data.record as { timestamp?: string }).timestamp : data.to;
        next = { ...site, lastCommunication: later(site.lastCommunication, at ?? null) };
      }
      set({ sites: new Map(state.sites).set(data.siteId, next) });
      if (event === 'alarm') for (const l of alarmListeners) l(data);
    },
    (stream) => set({ stream }),
  );
}

/** Keeps the stream open while the caller is mounted (the signed-in app is). */
export function useAlarmFeed(token: string | undefined) {
  useEffect(() => {
    if (!token) return;
    users++;
    if (users === 1) start();
    return () => {
      users--;
      if (users === 0) {
        stop?.();
        stop = undefined;
        state = { ready: false, sites: new Map(), stream: 'stopped' };
      }
    };
  }, [token]);
}

/** The live alarms and sites; re-renders the caller at every change. */
export function useAlarmStore(): State {
  const [, bump] = useState(0);
  useEffect(() => {
    const l = () => bump((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return state;
}

/** Calls `fn` at every `alarm` event of the stream while the caller is mounted. */
export function useAlarmEvents(fn: (e: AlarmEvent) => void, deps: unknown[]) {
  useEffect(() => {
    alarmListeners.add(fn);
    return () => void alarmListeners.delete(fn);
  }, deps);
}

/** Every active alarm of the client's sites, newest first. */
export const allAlarms = (s: State): Alarm[] =>
  [...s.sites.values()].flatMap((x) => x.alarms).sort(newestFirst);

/** Whether an alarm is shelved now. */
export const isShelved = (a: { ShelvedUntil: string | null }, now = Date.now()) =>
  !!a.ShelvedUntil && Date.parse(a.ShelvedUntil) > now;

/** The alarms the banner counts: unacknowledged, critical or major, not shelved. */
export const needsAttention = (a: Alarm) =>
  !a.AcknowledgedAt && (a.Severity === 'critical' || a.Severity === 'major') && !isShelved(a);

/** A site's communication loss alarm (the site alarm COMM_LOSS the service raises), if open. */
export const commLoss = (site: SiteLive | undefined): Alarm | undefined =>
  site?.alarms.find((a) => a.Source === 'communication');

/** A site's worst state, the overview's ranking: 1 critical, 2 communication loss, 3 major, 4 other alarm, 5 normal. */
export function worstState(site: SiteLive | undefined): { rank: number; label: string } {
  const alarms = site?.alarms ?? [];
  if (alarms.some((a) => a.Severity === 'critical')) return { rank: 1, label: 'Critical alarm' };
  if (commLoss(site)) return { rank: 2, label: 'Communication lost' };
  if (alarms.some((a) => a.Severity === 'major')) return { rank: 3, label: 'Major alarm' };
  if (alarms.length) return { rank: 4, label: 'Alarm' };
  return { rank: 5, label: 'Normal' };
}
