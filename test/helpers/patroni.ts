/**
 * A highly available PostgreSQL as sites run it, from Debian's packages, for the failover fault test:
 * one etcd (etcd-server 3.4, the DCS), Patroni (3.0.2) managing PostgreSQL 15 instances
 * (/usr/lib/postgresql/15/bin), each its own data folder and port, a primary and synchronous standbys
 * (synchronous_mode: true, so a commit the primary acknowledged is on a standby too), and haproxy in
 * front, sending connections to whichever member answers Patroni's REST `GET /primary` with 200 and
 * cutting the sessions of a member marked down. Everything lives in one temp folder and on free ports,
 * never the machine's shared PostgreSQL.
 *
 * PostgreSQL refuses to run as root: when the tests run as root, Patroni (which starts PostgreSQL) runs
 * as the `postgres` user (spawn's uid/gid, so the child process is Patroni itself and can be SIGKILLed).
 * stop() ends every process it started, by its id, and removes the folder; it also SIGKILLs a
 * postmaster left behind by a member that was crashed.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { waitFor } from './wait.ts';

export const PG_BIN = '/usr/lib/postgresql/15/bin';

export interface PatroniOptions {
  /** PostgreSQL instances (default 2: a primary and its synchronous standby). */
  members?: number;
  /** Patroni's leader key time to live, s (default 10). */
  ttl?: number;
  /** Patroni's loop, s (default 2). */
  loopWait?: number;
  /** Patroni's DCS and PostgreSQL retry budget, s (default 5). */
  retryTimeout?: number;
  /** haproxy's health check interval, ms (default 500). */
  checkIntervalMs?: number;
}

export interface Member {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  proc: ChildProcess;
}

/** Patroni's GET /cluster, the parts used here. */
export interface ClusterView {
  members: { name: string; role: string; state: string; timeline?: number; lag?: number | string }[];
}

export interface PatroniCluster {
  /** A URL through haproxy (the leader, whoever it is) to `database`, as user postgres. */
  url(database: string): string;
  /** A URL straight to one member's PostgreSQL. */
  memberUrl(name: string, database: string): string;
  members: Member[];
  /** Patroni's view of the cluster, asked of any member that answers. */
  cluster(): Promise<ClusterView>;
  /** The leader's name, once there is one running. */
  leader(timeoutMs?: number): Promise<string>;
  /** The leader's synchronous standby's name, once there is one streaming. */
  syncStandby(timeoutMs?: number): Promise<string>;
  /**
   * The leader's machine lost: its Patroni and its postmaster SIGKILLed (Patroni first, so it cannot
   * restart PostgreSQL; the backends exit on their postmaster's death). Resolves at the kill.
   */
  crashLeader(): Promise<{ name: string; at: number }>;
  /**
   * Start a crashed member's Patroni again (same configuration and data folder): it rejoins the
   * cluster as a standby. Resolves once the cluster has a synchronous standby again.
   */
  restartMember(name: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the time a write through haproxy first commits (polled every `everyMs`). */
  waitWritable(timeoutMs: number, everyMs?: number): Promise<number>;
  logs(): string;
  stop(): Promise<void>;
}

const alive = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawns with output kept (the last 20,000 characters per process) for failure messages. */
function start(name: string, cmd: string, args: string[], opts: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv; cwd?: string }) {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d).slice(-20_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  proc.on('error', (e) => keep(Buffer.from(`spawn ${cmd}: ${e.message}\n`)));
  return { name, proc, output: () => out };
}

function terminate(p: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<void> {
  if (!alive(p)) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => p.kill('SIGKILL'), graceMs);
    p.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    p.kill(signal);
  });
}

/** The postmaster's pid from its data folder (first line of postmaster.pid), if it is running. */
function postmasterPid(dataDir: string): number | undefined {
  const f = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(f)) return undefined;
  const pid = Number(readFileSync(f, 'utf8').split('\n')[0]);
  return pid > 0 && pidAlive(pid) ? pid : undefined;
}

/**
 * A free port below the kernel's ephemeral range (32768-60999 by default). PostgreSQL binds its port
 * only when Patroni starts it, tens of seconds after the port was chosen on a loaded machine; a port
 * from the ephemeral range (what listening on port 0 hands out) was meanwhile taken by another process
 * in one run here (the standby's postmaster: "could not bind ... Address already in use").
 */
function quietPort(): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 12_000);
  return new Promise((resolve) => {
    const s = createServer()
      .once('error', () => resolve(quietPort()))
      .listen(port, '127.0.0.1', () => s.close(() => resolve(port)));
  });
}

export async function startPatroniCluster(o: PatroniOptions = {}): Promise<PatroniCluster> {
  const n = o.members ?? 2;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-patroni-'));
  chmodSync(dir, 0o755);
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot
    ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) }
    : {};
  const own = (p: string) => {
    if (owner.uid !== undefined) chownSync(p, owner.uid, owner.gid!);
  };
  const procs: ReturnType<typeof start>[] = [];
  const members: Member[] = [];
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Patroni first (each stops its PostgreSQL), then the proxy and the DCS.
    await Promise.all(procs.filter((p) => p.name.startsWith('patroni')).map((p) => terminate(p.proc)));
    for (const m of members) {
      const pid = postmasterPid(m.dataDir);
      if (pid) process.kill(pid, 'SIGKILL');
    }
    await Promise.all(procs.filter((p) => !p.name.startsWith('patroni')).map((p) => terminate(p.proc)));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const etcdClient = await quietPort();
    const etcdPeer = await quietPort();
    const etcd = start(
      'etcd',
      'etcd',
      [
        '--name',
        'e0',
        '--data-dir',
        path.join(dir, 'etcd'),
        '--listen-client-urls',
        `http://127.0.0.1:${etcdClient}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${etcdClient}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${etcdPeer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${etcdPeer}`,
        '--initial-cluster',
        `e0=http://127.0.0.1:${etcdPeer}`,
        '--log-level',
        'warn',
      ],
      {},
    );
    procs.push(etcd);
    await waitFor(
      async () => {
        if (!alive(etcd.proc)) throw new Error(`etcd exited:\n${etcd.output()}`);
        return fetch(`http://127.0.0.1:${etcdClient}/health`).then(
          (r) => r.ok,
          () => false,
        );
      },
      'etcd healthy',
      30_000,
      etcd.output,
      100,
    );

    const startPatroni = (name: string) => {
      const p = start(`patroni ${name}`, 'patroni', [path.join(dir, `${name}.yml`)], {
        ...owner,
        cwd: dir,
        env: { ...process.env, HOME: dir },
      });
      procs.push(p);
      return p.proc;
    };
    const scope = path.basename(dir);
    // Patroni (as postgres) creates the data folders here.
    own(dir);
    for (let i = 0; i < n; i++) {
      const name = `pg${i}`;
      const [pgPort, restPort] = [await quietPort(), await quietPort()];
      const dataDir = path.join(dir, name);
      const config = path.join(dir, `${name}.yml`);
      // JSON is YAML: Patroni reads it as its configuration file.
      writeFileSync(
        config,
        JSON.stringify({
          scope,
          name,
          restapi: { listen: `127.0.0.1:${restPort}`, connect_address: `127.0.0.1:${restPort}` },
          etcd3: { hosts: `127.0.0.1:${etcdClient}` },
          bootstrap: {
            dcs: {
              ttl: o.ttl ?? 10,
              loop_wait: o.loopWait ?? 2,
              retry_timeout: o.retryTimeout ?? 5,
              synchronous_mode: true,
              // A crashed leader that comes back rejoins as a standby: rewound, or copied again if it cannot be.
              postgresql: { use_pg_rewind: true, parameters: { max_connections: 300 } },
            },
            initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
            pg_hba: ['local all all trust', 'host replication all 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 trust'],
          },
          postgresql: {
            listen: `127.0.0.1:${pgPort}`,
            connect_address: `127.0.0.1:${pgPort}`,
            data_dir: dataDir,
            bin_dir: PG_BIN,
            pgpass: path.join(dir, `${name}.pgpass`),
            authentication: { superuser: { username: 'postgres' }, replication: { username: 'postgres' } },
            parameters: { unix_socket_directories: dir },
            remove_data_directory_on_rewind_failure: true,
            remove_data_directory_on_diverged_timelines: true,
          },
          log: { level: 'INFO' },
        }),
      );
      own(config);
      members.push({ name, pgPort, restPort, dataDir, proc: startPatroni(name) });
    }

    const haproxyPort = await quietPort();
    const haproxyCfg = path.join(dir, 'haproxy.cfg');
    writeFileSync(
      haproxyCfg,
      [
        'global',
        '  maxconn 4000',
        'defaults',
        '  mode tcp',
        '  timeout connect 3s',
        '  timeout client 30m',
        '  timeout server 30m',
        '  timeout check 1s',
        'listen primary',
        `  bind 127.0.0.1:${haproxyPort}`,
        '  option httpchk GET /primary',
        '  http-check expect status 200',
        `  default-server inter ${o.checkIntervalMs ?? 500}ms fall 2 rise 1 on-marked-down shutdown-sessions`,
        ...members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} check port ${m.restPort}`),
        '',
      ].join('\n'),
    );
    procs.push(start('haproxy', 'haproxy', ['-f', haproxyCfg, '-db'], {}));

    const logs = () => procs.map((p) => `--- ${p.name} (last 3000 chars):\n${p.output().slice(-3000)}`).join('\n');
    const cluster = async (): Promise<ClusterView> => {
      for (const m of members) {
        const r = await fetch(`http://127.0.0.1:${m.restPort}/cluster`).catch(() => undefined);
        if (r?.ok) return (await r.json()) as ClusterView;
      }
      throw new Error('no Patroni member answers GET /cluster');
    };
    const roleOf = async (role: string, timeoutMs: number) =>
      waitFor(
        async () => {
          const c = await cluster().catch(() => undefined);
          return c?.members.find((m) => m.role === role && (m.state === 'running' || m.state === 'streaming'))?.name;
        },
        `a Patroni ${role}`,
        timeoutMs,
        logs,
        100,
      );
    const url = (database: string) => `postgres://postgres@127.0.0.1:${haproxyPort}/${database}`;
    const waitWritable = (timeoutMs: number, everyMs = 100) =>
      waitFor(
        async () => {
          const c = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 2000 });
          c.on('error', () => {});
          try {
            await c.connect();
            await c.query('create table if not exists failover_probe (at timestamptz not null default now())');
            await c.query('insert into failover_probe default values');
            return Date.now();
          } catch {
            return undefined;
          } finally {
            await c.end().catch(() => {});
          }
        },
        'a write through haproxy',
        timeoutMs,
        logs,
        everyMs,
      );

    const c: PatroniCluster = {
      url,
      memberUrl: (name, database) => `postgres://postgres@127.0.0.1:${members.find((m) => m.name === name)!.pgPort}/${database}`,
      members,
      cluster,
      leader: (timeoutMs = 60_000) => roleOf('leader', timeoutMs),
      syncStandby: (timeoutMs = 60_000) => roleOf('sync_standby', timeoutMs),
      async crashLeader() {
        const name = await c.leader(5_000);
        const m = members.find((x) => x.name === name)!;
        const pm = postmasterPid(m.dataDir);
        if (!pm) throw new Error(`leader ${name} has no running postmaster`);
        const exited = new Promise<void>((resolve) => (alive(m.proc) ? m.proc.once('exit', () => resolve()) : resolve()));
        m.proc.kill('SIGKILL');
        process.kill(pm, 'SIGKILL');
        const at = Date.now();
        await exited;
        return { name, at };
      },
      async restartMember(name, timeoutMs = 120_000) {
        const m = members.find((x) => x.name === name)!;
        if (alive(m.proc)) throw new Error(`member ${name}: its Patroni is still running`);
        m.proc = startPatroni(name);
        await waitFor(
          async () => {
            const v = await cluster().catch(() => undefined);
            return v?.members.some(
              (x) => x.name === name && x.role === 'sync_standby' && (x.state === 'streaming' || x.state === 'running'),
            );
          },
          `${name} back as the synchronous standby`,
          timeoutMs,
          logs,
          200,
        );
      },
      waitWritable,
      logs,
      stop,
    };
    await c.leader(90_000);
    if (n > 1) await c.syncStandby(90_000);
    await waitWritable(30_000);
    return c;
  } catch (e) {
    await stop();
    throw e;
  }
}
