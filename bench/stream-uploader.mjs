// Worker thread of bench/stream.ts: uploads single readings open loop (as many as are due every
// 5 ms, whatever the answers take) and reports when each 201 arrived and whether the reading
// replaced the current value, on its own event loop, so that the subscribers' work in the main
// thread does not delay those times.
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

// Plain JavaScript: a worker thread does not get the TypeScript loader of the main one.
const { base, token, sensors, rate, duration } = workerData;
// One connection per sensor, as one gateway per sensor: a sensor's readings arrive in order (two
// connections could overtake each other, and an overtaken reading replaces nothing).
const agents = sensors.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
const t0 = Date.now() - 600_000; // reading times: newer and newer, inside the accepted range
const now = () => performance.timeOrigin + performance.now();
let sent = 0;
let done = 0;
let errors = 0;
let batch = [];

const post = (i) => {
  const body = `{"sensorID":${sensors[i % sensors.length]},"value":${i},"timestamp":"${new Date(t0 + i).toISOString()}"}`;
  const req = request(
    `${base}/v1/edge/readings/sensor`,
    {
      method: 'POST',
      agent: agents[i % sensors.length],
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    },
    (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        done++;
        // stored 0: an older reading than the current one (requests overtake each other): no event is due.
        if (res.statusCode === 201) batch.push(i, now(), body.includes('"stored":1') ? 1 : 0);
        else errors++;
      });
    },
  );
  req.on('error', () => (done++, errors++));
  req.end(body);
};

const started = performance.now();
const report = setInterval(() => {
  if (batch.length) parentPort.postMessage({ answered: batch });
  batch = [];
}, 20);
const tick = setInterval(() => {
  const elapsed = (performance.now() - started) / 1000;
  if (elapsed < duration) {
    const due = Math.floor(elapsed * rate) + 1;
    while (sent < due) post(sent++);
    return;
  }
  clearInterval(tick);
  const finish = setInterval(() => {
    if (done < sent) return;
    clearInterval(finish);
    clearInterval(report);
    parentPort.postMessage({ answered: batch, sent, errors, elapsed });
    agents.forEach((a) => a.destroy());
  }, 20);
}, 5);
