// What one Node process on this machine answers at most, with the load generator of bench/ingest.ts
// (wrk, 32 connections) and a single reading's request, but none of the service's work: (1) Node's
// own HTTP server that parses the JSON body and answers 201; (2) Fastify with the reading's body
// schema and response schema, no logger, no hooks. Each in turns, BENCH_ROUNDS rounds (default 2) of
// BENCH_DURATION seconds (default 10) after a 2 s warm-up; the server's CPU (from /proc) per run.
// The service's own readings (authentication, access, validation, the database write, metrics and
// logs) are measured by bench/ingest.ts; this is the ceiling they sit under.
//
//   npx tsx bench/http-ceiling.ts      (needs wrk: apt-get install -y wrk)
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, freePort } from './harness.js';
import { record } from './record.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 32;
const run = promisify(execFile);

const BODY = '{"sensorID":10100,"value":12.5,"timestamp":"2026-11-27T09:00:00.000Z"}';
const ANSWER = '{"received":1,"stored":1,"duplicates":0}';

const SERVERS: Record<string, string> = {
  'node:http, JSON.parse of the body': `
import http from 'node:http';
http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    JSON.parse(body);
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' });
    res.end('${ANSWER}');
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));`,
  'Fastify, body and response schemas, no logger': `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/v1/edge/readings/sensor', {
  schema: {
    body: { type: 'object', required: ['sensorID', 'value', 'timestamp'], additionalProperties: false,
      properties: { sensorID: { type: 'integer' }, value: { type: 'number' }, timestamp: { type: 'string', format: 'date-time' } } },
    response: { 201: { type: 'object', properties: { received: { type: 'integer' }, stored: { type: 'integer' }, duplicates: { type: 'integer' } } } },
  },
}, async (req, reply) => reply.code(201).send({ received: 1, stored: 1, duplicates: 0 }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');`,
};

const LUA = join(tmpdir(), `http-ceiling-${process.pid}.lua`);
writeFileSync(
  LUA,
  `wrk.method = "POST"
wrk.headers["authorization"] = "Bearer x"
wrk.headers["content-type"] = "application/json"
wrk.body = '${BODY}'
`,
);

/** wrk's "12.34ms", "850.00us" or "1.20s" in milliseconds. */
function ms(x: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(x);
  if (!m) throw new Error(`wrk: unreadable latency ${x}`);
  return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
}

async function measure(name: string, round: number): Promise<void> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--input-type=module', '-e', SERVERS[name]], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.on('exit', (code) => reject(new Error(`${name} exited (${code})`)));
    });
    const url = `http://127.0.0.1:${port}/v1/edge/readings/sensor`;
    const wrk = (seconds: number) =>
      run('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', LUA, url]);
    await wrk(2);
    const before = cpuSeconds(child.pid!);
    const { stdout } = await wrk(DURATION);
    const cpu = (cpuSeconds(child.pid!) - before) / DURATION;
    const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
    const p50 = ms(/ 50%\s+(\S+)/.exec(stdout)![1]);
    const p99 = ms(/ 99%\s+(\S+)/.exec(stdout)![1]);
    const bad = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? '0';
    console.log(
      `| ${name} | ${round} | ${Math.round(rate).toLocaleString('en-US')} | ${p50} | ${p99} | ${bad} | ${cpu.toFixed(2)} |`,
    );
  } finally {
    child.kill();
  }
}

await record('http-ceiling');
console.log(
  `\n${DURATION} s a run after a 2 s warm-up, wrk with ${CONNECTIONS} connections on loopback, the body of one reading (${BODY.length} bytes), in turns.\n`,
);
console.log('| server | round | req/s | p50 ms | p99 ms | non-2xx | server CPU (cores) |');
console.log('|---|---|---|---|---|---|---|');
for (let round = 1; round <= ROUNDS; round++)
  for (const name of Object.keys(SERVERS)) await measure(name, round);
