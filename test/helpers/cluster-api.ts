/**
 * An API server over an in-process cluster (the same database, scheduler and adapters), with an admin
 * token: for tests that read what the engine did through GraphQL.
 */
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import type { Cluster } from './cluster.ts';
import { testAuth } from './auth.ts';

export interface ClusterApi {
  api: ApiServer;
  /** Run a query as the admin; GraphQL errors throw. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answer's shape from their own query.
  gql(query: string, variables?: Record<string, unknown>): Promise<any>;
}

export async function startClusterApi(c: Cluster): Promise<ClusterApi> {
  const auth = await testAuth(c.db.db);
  const api = await startApiServer({
    db: c.db.db,
    scheduler: c.engine.scheduler,
    port: 0,
    host: '127.0.0.1',
    auth: auth.auth,
    adapters: c.adapters,
    images: c.adapters.images,
  });
  const headers = { 'content-type': 'application/json', ...auth.bearer(auth.adminToken) };
  return {
    api,
    async gql(query, variables = {}) {
      const r = await fetch(api.url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
      const body = (await r.json()) as { data?: unknown; errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    },
  };
}
