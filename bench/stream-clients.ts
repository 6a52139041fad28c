// Live stream subscribers for the benchmarks: raw HTTP connections with a minimal SSE parser (the
// load generator shares the cores with the server, so it does as little as it can per event).
import { Agent, request } from 'node:http';

export interface Subscribers {
  /** Reading events received, per subscriber. */
  readings: number[];
  /** Other events received (logs, alarm, config), per subscriber. */
  others: number[];
  /** Streams that ended or failed before close(). */
  ended: number;
  close(): void;
}

/**
 * Opens n streams of the given sites; resolves once each has its snapshot. onReading(subscriber,
 * value, at) is called for each reading event with the reading's value and performance.now().
 */
export async function openSubscribers(
  base: string,
  token: string,
  siteIds: string,
  n: number,
  onReading?: (sub: number, value: number, at: number) => void,
): Promise<Subscribers> {
  const agent = new Agent({ keepAlive: true, maxSockets: n });
  const result: Subscribers = {
    readings: Array(n).fill(0),
    others: Array(n).fill(0),
    ended: 0,
    close: () => {},
  };
  let closing = false;
  const requests = Array.from(
    { length: n },
    (_, i) =>
      new Promise<() => void>((resolve, reject) => {
        const req = request(
          `${base}/v1/stream?siteIds=${siteIds}`,
          { agent, headers: { authorization: `Bearer ${token}` } },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`));
            res.setEncoding('utf8');
            let text = '';
            let ready = false;
            res.on('data', (chunk: string) => {
              const at = performance.now();
              text += chunk;
              const end = text.lastIndexOf('\n\n');
              if (end < 0) return;
              const block = text.slice(0, end);
              text = text.slice(end + 2);
              if (!ready) {
                if (!block.includes('event: snapshot\n')) return;
                ready = true;
                return resolve(() => req.destroy());
              }
              // Cheaper than splitting into frames: count event lines, read each reading's value.
              for (let p = block.indexOf('event: '); p >= 0; p = block.indexOf('event: ', p + 7)) {
                if (block.startsWith('reading', p + 7)) result.readings[i]++;
                else result.others[i]++;
              }
              if (onReading)
                for (
                  let p = block.indexOf('"value":');
                  p >= 0;
                  p = block.indexOf('"value":', p + 8)
                )
                  onReading(i, parseFloat(block.slice(p + 8, p + 30)), at);
            });
            res.on('close', () => !closing && result.ended++);
          },
        );
        req.on('error', (err) => (closing ? undefined : reject(err)));
        req.end();
      }),
  );
  const closers = await Promise.all(requests);
  result.close = () => {
    closing = true;
    closers.forEach((c) => c());
    agent.destroy();
  };
  return result;
}
