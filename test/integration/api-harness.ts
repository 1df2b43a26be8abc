/**
 * Shared by the api-*.test.ts files: a fresh database, the real API server on a free port (with a real
 * authenticator: API tokens), a GraphQL client over real HTTP that carries an admin token (subject
 * `tester`) unless a test passes its own `authorization`, and a Scheduler that records the kicks of
 * committed transactions only.
 */
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../src/api/server.ts';
import type { Scheduler, OperatorName } from '../../src/engine/scheduler.ts';
import { testAuth, type TestAuth } from '../helpers/auth.ts';
import { afterCommit } from '../../src/db/tx.ts';

export interface RecordingScheduler extends Scheduler {
  /** Operators kicked by transactions that committed (or on the pool, at once), in order. */
  committed: OperatorName[][];
  clear(): void;
}

export function recordingScheduler(): RecordingScheduler {
  const committed: OperatorName[][] = [];
  return {
    committed,
    clear: () => {
      committed.length = 0;
    },
    async kick(db, ops) {
      afterCommit(db, () => committed.push([...ops]));
    },
    async wakeAt() {},
    async poll() {},
    async enqueueActions() {},
    async decideLater() {},
  };
}

export interface GqlResult<T = any> {
  status: number;
  data?: T;
  errors?: { message: string; extensions?: { code?: string; field?: string | null; issues?: { field: string; message: string }[] } }[];
}

export interface Harness {
  db: TestDb;
  server: ApiServer;
  scheduler: RecordingScheduler;
  /** The server's auth, the admin token the client sends by default, and more tokens on demand. */
  auth: TestAuth;
  gql<T = any>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GqlResult<T>>;
  /** Like gql, but fails the test on any error. */
  ok<T = any>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<T>;
  close(): Promise<void>;
}

export async function startHarness(opts: Partial<ApiServerOptions> = {}): Promise<Harness> {
  const db = await freshDb();
  const scheduler = recordingScheduler();
  const auth = await testAuth(db.db);
  const server = await startApiServer({ db: db.db, scheduler, port: 0, host: '127.0.0.1', auth: auth.auth, ...opts });
  const gql = async (query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth.bearer(auth.adminToken), ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, ...(await res.json()) } as GqlResult;
  };
  return {
    db,
    server,
    scheduler,
    auth,
    gql,
    async ok(query, variables, headers) {
      const r = await gql(query, variables, headers);
      if (r.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors, null, 2)}`);
      return r.data;
    },
    async close() {
      await server.close();
      await db.drop();
    },
  };
}

/** The first error's code and field, for compact assertions. */
export function errorOf(r: GqlResult): { code?: string; field?: string | null; message: string } {
  const e = r.errors?.[0];
  return { code: e?.extensions?.code, field: e?.extensions?.field, message: e?.message ?? '(no error)' };
}

export const COMPONENT_FIELDS = `id enabled error failureReason session sessionTenant retryPolicy updatedAt
  status { phase status statusOverride }
  actualState { bootArtifacts { kernel kernelParameters initrd } bssToken lastUpdated }
  desiredState { bootArtifacts { kernel kernelParameters initrd } configuration bssToken lastUpdated }
  stagedState { bootArtifacts { kernel kernelParameters initrd } configuration session lastUpdated }
  lastAction { action failed lastUpdated }
  eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }`;
