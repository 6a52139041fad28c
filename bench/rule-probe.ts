// How soon a limit rule's alarm is in the active list after the reading that crosses the limit was
// answered 201, under the ingest bench's load: a sensor of its own (no other request of the bench
// touches it) with a rule without delay gets, in turns, a reading above the limit (the time is taken
// from its 201 until a new alarm of the rule is listed by POST /v1/edge/alarms/active) and one below
// the deadband (its alarm clears before the next turn).

export const PROBE_LIMIT = 100;
export const PROBE_DEADBAND = 10;
export const PROBE_TYPE = 'BENCH_PROBE';

export interface ProbeResult {
  /** Each turn's time from the reading's 201 to its alarm in the active list, ms. */
  latencies: number[];
  /** Turns whose alarm was not listed within the wait (counted, not in latencies). */
  missed: number;
}

interface Target {
  base: string;
  token: string;
  site: number;
  sensor: number;
}

async function post(
  t: Target,
  path: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${t.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

/** The ids of the probe rule's unresolved alarms. */
async function probeAlarms(t: Target): Promise<string[]> {
  const res = await post(t, '/v1/edge/alarms/active', { siteIds: [t.site], limit: 1000 });
  if (res.status !== 200) return [];
  return (res.body as { SiteAlarmLogID: string; AlarmType: string }[])
    .filter((a) => a.AlarmType === PROBE_TYPE)
    .map((a) => a.SiteAlarmLogID);
}

async function reading(t: Target, value: number): Promise<boolean> {
  const res = await post(t, '/v1/edge/readings/sensor', {
    sensorID: t.sensor,
    value,
    timestamp: new Date().toISOString(),
  });
  return res.status === 201;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs turns until `stop()` says so; `wait` bounds how long one alarm is waited for. */
export async function runRuleProbe(
  t: Target,
  stop: () => boolean,
  wait = 10_000,
): Promise<ProbeResult> {
  const result: ProbeResult = { latencies: [], missed: 0 };
  while (!stop()) {
    const before = new Set(await probeAlarms(t));
    if (!(await reading(t, PROBE_LIMIT + 5))) continue;
    const answered = performance.now();
    let seen = false;
    while (performance.now() - answered < wait) {
      if ((await probeAlarms(t)).some((id) => !before.has(id))) {
        seen = true;
        break;
      }
      await sleep(10);
    }
    if (seen) result.latencies.push(performance.now() - answered);
    else result.missed++;
    // Below the deadband: the alarm clears (not timed), so the next turn raises a new one.
    await reading(t, PROBE_LIMIT - PROBE_DEADBAND - 5);
    const clearBy = performance.now() + wait;
    while ((await probeAlarms(t)).length && performance.now() < clearBy) await sleep(20);
    await sleep(200);
  }
  return result;
}

/** The q-quantile (0 to 1, nearest rank) of the latencies, ms; undefined when there are none. */
export function probeQuantile(r: ProbeResult, q: number): number | undefined {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))];
}

/** p50, p99 and max of the latencies, ms, as text. */
export function describeProbe(r: ProbeResult): string {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const at = (q: number) => probeQuantile(r, q)!;
  return sorted.length
    ? `${sorted.length} alarms, p50 ${at(0.5).toFixed(0)} ms, p99 ${at(0.99).toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms; ${r.missed} not listed within 10 s`
    : `no alarm listed (${r.missed} turns missed)`;
}
