import { useEffect, useState } from 'preact/hooks';
import { post } from './api.js';
import { openStream } from './stream.js';
import { worstStateOf, type WorstState } from './worst-state.js';

// Each shown site's worst state, from its unresolved alarms (POST /v1/edge/alarms/active), kept live:
// an alarm event of one of the sites on the stream reads them again (a burst of events, once).

const LIMIT = 1000;
const AGAIN_AFTER_MS = 300;

export function useSiteStates(siteIds: number[]): Map<number, WorstState> | undefined {
  const [states, setStates] = useState<Map<number, WorstState>>();
  const key = [...siteIds].sort((a, b) => a - b).join(',');
  useEffect(() => {
    if (!siteIds.length) {
      setStates(new Map());
      return;
    }
    const ctl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const alarms = await post('/v1/edge/alarms/active', { siteIds, limit: LIMIT }, ctl.signal);
        const bySite = new Map<number, { Severity: string; commLoss: boolean }[]>();
        for (const a of alarms) {
          const site = Number(a.SiteID);
          bySite.set(site, [
            ...(bySite.get(site) ?? []),
            { Severity: a.Severity, commLoss: a.Source === 'communication' },
          ]);
        }
        setStates(new Map(siteIds.map((id) => [id, worstStateOf(bySite.get(id) ?? [])])));
      } catch {
        /* aborted, or failed: the next event or mount reads again */
      }
    };
    void read();
    const close = openStream(
      siteIds,
      (e) => {
        if (e.event !== 'alarm') return;
        clearTimeout(timer);
        timer = setTimeout(() => void read(), AGAIN_AFTER_MS);
      },
      () => {},
    );
    return () => {
      ctl.abort();
      clearTimeout(timer);
      close();
    };
  }, [key]);
  return states;
}
