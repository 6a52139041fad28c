import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { join } from 'node:path';
import { PG_BIN_DIR } from '../pg-bin.js';
import { kill } from './balancer.js';
import { freePort, ROOT, waitFor, type Running } from './process.js';

// The database cluster of test/operations/failover.test.ts, on one machine: etcd, two Patroni nodes
// (PostgreSQL 15, run as the `postgres` user since PostgreSQL refuses root) on docs/patroni.yml, and
// HAProxy on docs/haproxy-postgres.cfg sending connections to whichever node is the primary. Every
// port is a free one the OS gave, every directory a temporary one.

export const PATRONI_CFG = join(ROOT, 'docs/patroni.yml');
export const HAPROXY_PG_CFG = join(ROOT, 'docs/haproxy-postgres.cfg');
const PASSWORD = 'failover-test-password';

interface Node {
  name: string;
  pgPort: number;
  apiPort: number;
  dataDir: string;
  process?: Running;
}

export interface Member {
  name: string;
  role: string;
  state: string;
  lag?: number | string;
}

function start(
  command: string,
  args: string[],
  env: Record<string, string>,
  as?: { uid: number; gid: number },
): Running {
  const child = spawn(command, args, {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  });
  let out = '';
  let err = '';
  // The last 20 kB of each stream, for a failure's message.
  child.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr!.on('data', (d) => (err = (err + d).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

const idOf = (flag: '-u' | '-g') => Number(spawnSync('id', [flag, 'postgres']).stdout.toString());

export class Cluster {
  private etcd?: Running;
  private haproxy?: Running;
  readonly nodes: Node[] = [];
  /** The service's DATABASE_URL: through HAProxy. */
  url = '';

  private constructor(
    private readonly dir: string,
    private readonly etcdPort: number,
  ) {}

  static async start(): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'site-monitor-failover-'));
    const cluster = new Cluster(dir, await freePort());
    try {
      await cluster.boot();
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  private async boot(): Promise<void> {
    const as = { uid: idOf('-u'), gid: idOf('-g') };
    chownSync(this.dir, as.uid, as.gid);
    const peer = await freePort();
    this.etcd = start(
      'etcd',
      [
        '--name=etcd',
        `--data-dir=${join(this.dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${this.etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${this.etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=etcd=http://127.0.0.1:${peer}`,
      ],
      {},
    );
    await waitFor(async () => {
      if (this.etcd!.child.exitCode !== null)
        throw new Error(`etcd exited: ${this.etcd!.stderr()}`);
      const res = await fetch(`http://127.0.0.1:${this.etcdPort}/health`).catch(() => undefined);
      return res?.ok ? true : undefined;
    }, 30_000);
    for (const name of ['node1', 'node2']) {
      const dataDir = join(this.dir, name);
      mkdirSync(dataDir, { mode: 0o700 });
      chownSync(dataDir, as.uid, as.gid);
      this.nodes.push({ name, pgPort: await freePort(), apiPort: await freePort(), dataDir });
    }
    // The first node makes the cluster (initdb); the second clones it once it leads.
    this.startNode(this.nodes[0], as);
    await this.waitFor(
      (ms) => ms.some((m) => m.name === 'node1' && m.role === 'leader' && m.state === 'running'),
      'node1 leading',
      60_000,
    );
    this.startNode(this.nodes[1], as);
    await this.waitFor(
      (ms) =>
        ms.some(
          (m) =>
            (m.name === 'node2' && m.role === 'sync_standby' && m.state === 'streaming') ||
            (m.name === 'node2' && m.role === 'sync_standby' && m.state === 'running'),
        ),
      'node2 a synchronous standby',
      90_000,
    );
    const pgBind = await freePort();
    this.haproxy = start('haproxy', ['-db', '-f', HAPROXY_PG_CFG], {
      PG_BIND: `127.0.0.1:${pgBind}`,
      NODE_1: `127.0.0.1:${this.nodes[0].pgPort}`,
      NODE_2: `127.0.0.1:${this.nodes[1].pgPort}`,
      NODE_1_API: String(this.nodes[0].apiPort),
      NODE_2_API: String(this.nodes[1].apiPort),
    });
    this.url = `postgres://postgres:${PASSWORD}@127.0.0.1:${pgBind}/postgres`;
    // HAProxy takes every node for up until its checks say otherwise: wait until connections land
    // on the primary four times in a row (round robin would have tried the standby among them).
    let inARow = 0;
    await waitFor(
      async () => ((inARow = (await this.writable()) ? inARow + 1 : 0) >= 4 ? true : undefined),
      30_000,
    ).catch((err) => {
      throw new Error(`HAProxy does not reach the primary: ${err}\n${this.logs()}`);
    });
  }

  /** Whether a connection through HAProxy now lands on a primary. */
  async writable(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      return rows[0].r === false;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  private startNode(node: Node, as: { uid: number; gid: number }): void {
    node.process = start(
      'patroni',
      [PATRONI_CFG],
      {
        HOME: this.dir,
        PATRONI_NAME: node.name,
        PATRONI_ETCD3_HOSTS: `127.0.0.1:${this.etcdPort}`,
        PATRONI_RESTAPI_LISTEN: `127.0.0.1:${node.apiPort}`,
        PATRONI_RESTAPI_CONNECT_ADDRESS: `127.0.0.1:${node.apiPort}`,
        PATRONI_POSTGRESQL_LISTEN: `127.0.0.1:${node.pgPort}`,
        PATRONI_POSTGRESQL_CONNECT_ADDRESS: `127.0.0.1:${node.pgPort}`,
        PATRONI_POSTGRESQL_DATA_DIR: node.dataDir,
        PATRONI_POSTGRESQL_BIN_DIR: PG_BIN_DIR,
        PATRONI_POSTGRESQL_PGPASS: join(this.dir, `${node.name}.pgpass`),
        PATRONI_SUPERUSER_PASSWORD: PASSWORD,
        PATRONI_REPLICATION_PASSWORD: PASSWORD,
      },
      as,
    );
  }

  /** The cluster as Patroni's REST API describes it (any node that answers). */
  async members(): Promise<Member[]> {
    for (const node of this.nodes) {
      const res = await fetch(`http://127.0.0.1:${node.apiPort}/cluster`, {
        signal: AbortSignal.timeout(2000),
      }).catch(() => undefined);
      if (res?.ok) return ((await res.json()) as { members: Member[] }).members;
    }
    return [];
  }

  async waitFor(ok: (members: Member[]) => boolean, what: string, ms = 60_000): Promise<Member[]> {
    return waitFor(async () => {
      const members = await this.members();
      return ok(members) ? members : undefined;
    }, ms).catch((err) => {
      throw new Error(`waited for ${what}: ${err}\n${this.logs()}`);
    });
  }

  /** The node that leads now. */
  async leader(): Promise<string> {
    const members = await this.waitFor(
      (ms) => ms.some((m) => m.role === 'leader' && m.state === 'running'),
      'a leader',
    );
    return members.find((m) => m.role === 'leader')!.name;
  }

  /** Kills the postmaster of `name` with SIGKILL (Patroni itself goes on running). */
  killPostmaster(name: string): number {
    const node = this.nodes.find((n) => n.name === name)!;
    const pid = Number(readFileSync(join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** `patronictl switchover` from the leader to the other node; resolves when patronictl returns. */
  switchover(leader: string, candidate: string): Running {
    return start(
      'patronictl',
      ['-c', PATRONI_CFG, 'switchover', '--leader', leader, '--candidate', candidate, '--force'],
      { PATRONI_ETCD3_HOSTS: `127.0.0.1:${this.etcdPort}` },
    );
  }

  /** What the processes said last, for a failure's message. */
  logs(): string {
    const tail = (p: Running | undefined) =>
      `${p?.stdout().slice(-3000)}${p?.stderr().slice(-3000)}`;
    return [
      ...this.nodes.map((n) => `--- ${n.name}\n${tail(n.process)}`),
      `--- haproxy\n${tail(this.haproxy)}`,
    ].join('\n');
  }

  async close(): Promise<void> {
    await kill(this.haproxy);
    // Patroni first (so it does not restart PostgreSQL), then whatever PostgreSQL is left.
    await Promise.all(this.nodes.map((n) => kill(n.process)));
    for (const node of this.nodes) {
      try {
        const pid = Number(
          readFileSync(join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
        );
        process.kill(pid, 'SIGKILL');
      } catch {
        // no PostgreSQL running there
      }
    }
    await kill(this.etcd);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
