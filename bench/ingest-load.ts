// Request bodies for the ingest benchmark. Every batch holds new keys (no run is flattered by
// duplicates, which cost no write), and the raw COPY baseline can make exactly the same rows.

export interface Fleet {
  /** Sensor ids of each site, in site order. */
  sitesSensors: number[][];
  /** Epoch ms of the first minute written: inside the months the service keeps partitions for. */
  base: number;
}

export const SENSORS_PER_BATCH = 10;
export const MINUTES_PER_BATCH = 100; // 10 sensors x 100 minutes = 1,000 records a request

/** The rows of batch number c: one site's gateway sends ten sensors' next 100 minutes. */
export function batchRows(
  fleet: Fleet,
  c: number,
  each: (sensor: number, ts: string, value: number) => void,
): void {
  const site = c % fleet.sitesSensors.length;
  const window = Math.floor(c / fleet.sitesSensors.length);
  const sensors = fleet.sitesSensors[site].slice(0, SENSORS_PER_BATCH);
  for (let m = 0; m < MINUTES_PER_BATCH; m++) {
    const minute = window * MINUTES_PER_BATCH + m;
    const ts = new Date(fleet.base + minute * 60_000).toISOString();
    for (const s of sensors)
      each(s, ts, Math.round(((s % 97) * 10 + Math.sin(minute / 60) * 50) * 100) / 100);
  }
}

export function batchBody(fleet: Fleet, c: number): string {
  const parts: string[] = [];
  batchRows(fleet, c, (s, ts, v) =>
    parts.push(`{"sensorID":${s},"value":${v},"timestamp":"${ts}"}`),
  );
  return `[${parts.join(',')}]`;
}

/** COPY text of batches [0, n): the very rows the HTTP run stored. */
export function* copyChunks(fleet: Fleet, n: number): Generator<string> {
  for (let c = 0; c < n; c++) {
    let chunk = '';
    batchRows(fleet, c, (s, ts, v) => (chunk += `${s}\t${ts}\t${v}\n`));
    yield chunk;
  }
}

/** A live reading of sensor number c of the first `sites` sites, stamped now (as a gateway sends it). */
export function readingBody(fleet: Fleet, c: number, sites = fleet.sitesSensors.length): string {
  const all = fleet.sitesSensors.slice(0, sites);
  const site = all[c % all.length];
  const sensor = site[Math.floor(c / all.length) % site.length];
  return `{"sensorID":${sensor},"value":${(c % 1000) / 10},"timestamp":"${new Date().toISOString()}"}`;
}
