/**
 * A real PgBouncer (Debian's package) in front of the test PostgreSQL, for tests of bootorch behind a
 * connection pooler. It refuses to run as root, so it runs as the `postgres` user (runuser) when the
 * tests run as root. Stopped with SIGTERM to that process only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './wait.ts';
import { freePort } from './ports.ts';

export interface PgBouncer {
  /** A URL through PgBouncer to `database` (the same user as the upstream URL). */
  url(database: string): string;
  /** PgBouncer's admin console (SHOW STATS, SHOW POOLS). */
  adminUrl: string;
  output(): string;
  stop(): Promise<void>;
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => s.end(() => resolve(true)));
    s.once('error', () => resolve(false));
  });

/** PgBouncer in `mode` (transaction by default) with `poolSize` server connections per database. */
export async function startPgBouncer(
  upstreamUrl: string,
  o: { mode?: 'transaction' | 'session'; poolSize?: number } = {},
): Promise<PgBouncer> {
  const up = new URL(upstreamUrl);
  const user = decodeURIComponent(up.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-pgbouncer-'));
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" "${decodeURIComponent(up.password)}"\n`, { mode: 0o644 });
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${up.hostname} port=${up.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      `auth_type = ${up.password ? 'plain' : 'trust'}`,
      `auth_file = ${dir}/users.txt`,
      `admin_users = ${user}`,
      `pool_mode = ${o.mode ?? 'transaction'}`,
      `default_pool_size = ${o.poolSize ?? 4}`,
      'max_client_conn = 1000',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const cmd = asRoot ? ['runuser', '-u', 'postgres', '--', 'pgbouncer'] : ['pgbouncer'];
  const proc: ChildProcess = spawn(cmd[0]!, [...cmd.slice(1), path.join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => {
    out += d;
  });
  proc.stderr!.on('data', (d) => {
    out += d;
  });
  const auth = up.password ? `${up.username}:${up.password}` : up.username || 'postgres';
  const url = (database: string) => `postgres://${auth}@127.0.0.1:${port}/${database}`;
  await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`pgbouncer exited (${proc.exitCode}):\n${out}`);
      return answers(port);
    },
    'pgbouncer listening',
    15_000,
    () => out,
    50,
  );
  return {
    url,
    adminUrl: url('pgbouncer'),
    output: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        await new Promise<void>((resolve) => {
          proc.once('exit', () => resolve());
          proc.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
