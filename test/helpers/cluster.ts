/**
 * A whole bootorch on one fresh database: the simulated cluster, its in-process adapters, the engine
 * with every operator, and the node reporters wired to the same reportBootState the API mutation
 * uses. Waits re-check on every component event (LISTEN) with a deadline; nothing sleeps.
 */
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { nodeConfigDrive } from '../../src/adapters/standalone/config-drive.ts';
import { freshDb, type TestDb } from './db.ts';
import { SimWorld, type WorldOptions } from '../../src/sim/world.ts';
import { createSimAdapters } from '../../src/adapters/factory.ts';
import { startEngine, type EngineHandle } from '../../src/engine/runtime.ts';
import { createOperators } from '../../src/operators/index.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';
import { mergeRollout, type RolloutPolicy } from '../../src/domain/rollout-policy.ts';
import { deployHeartbeat } from '../../src/engine/deploy-heartbeat.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';
import { verifyApiToken } from '../../src/auth/api-tokens.ts';
import { authorize } from '../../src/auth/authorize.ts';
import { isAuthFailure } from '../../src/auth/principal.ts';
import { heartbeatSender } from '../../src/auth/node-scopes.ts';
import { newAttemptId, newTicket } from '../../src/auth/boot-tickets.ts';
import { issueTicket } from '../../src/db/boot-grants.ts';
import { exchangeTicket } from '../../src/api/boot/exchange.ts';
import { EVENTS_CHANNEL } from '../../src/db/events.ts';
import type { Options } from '../../src/domain/options.ts';
import type { Adapters } from '../../src/adapters/ports.ts';
import { waitFor as waitOn } from './wait.ts';
import { instrumentAdapters } from '../../src/observability/ports.ts';

/** Fast option values: every wait is a second or two, so escalations happen within a test. */
export const FAST_OPTIONS: Partial<Options> = {
  polling_frequency: 2,
  transit_polling_frequency: 0.5,
  max_power_off_wait_time: 1,
  max_power_on_wait_time: 1,
  max_boot_wait_time: 2,
  discovery_frequency: 0,
  cleanup_completed_session_ttl: '0',
};

export interface Cluster {
  db: TestDb;
  world: SimWorld;
  adapters: Adapters;
  engine: EngineHandle;
  /** Insert a template whose one boot set covers `nodes` (default: every node) with the world's image. */
  template(
    name: string,
    o?: { nodes?: string[]; groups?: string[]; configuration?: string; rollout?: object; arch?: string; deploy?: DeployRecord },
  ): Promise<void>;
  /** Insert a pending session and kick session-setup, as createSession does. */
  session(
    name: string,
    o: { template: string; operation: 'boot' | 'reboot' | 'shutdown'; limit?: string; stage?: boolean; rollout?: object },
  ): Promise<void>;
  waitForSession(name: string, timeoutMs?: number): Promise<SessionRow>;
  waitFor(cond: () => Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
  components(ids?: string[]): Promise<any[]>;
  events(filter?: { session?: string; component?: string }): Promise<any[]>;
  close(): Promise<void>;
}

export interface SessionRow {
  name: string;
  status: string;
  error: string | null;
  components: string;
}

export async function startCluster(
  o: {
    world?: WorldOptions;
    options?: Partial<Options>;
    /** Measure the ports (metrics, spans) as the roles do. */
    instrument?: boolean;
    /** A database to use instead of a fresh one from the test run's template (the benches', outside vitest). */
    db?: TestDb;
    /** The engine's logger (default: silent, or the level in TEST_LOG on stdout). */
    log?: Logger;
  } = {},
): Promise<Cluster> {
  const db = o.db ?? (await freshDb());
  await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify({ ...FAST_OPTIONS, ...o.options })]);
  const world = new SimWorld({ nodes: 8, ...o.world });
  const adapters = o.instrument ? instrumentAdapters(createSimAdapters(world)) : createSimAdapters(world);
  // Components exist before sessions, as discovery would have made them.
  await db.pool.query(
    `insert into components (id, last_action, last_action_at)
    select unnest($1::text[]), 'newly_discovered', now()`,
    [world.ids()],
  );
  const log = o.log ?? pino({ level: process.env.TEST_LOG ?? 'silent' });
  const engine = await startEngine({ url: db.url, db: db.db, adapters, operators: createOperators(), log });
  const reports = createReportBatcher(db.db, engine.scheduler);
  world.setReportHandler(async (id: string, token: string) => {
    const r = await reports.report({ id, token, actor: `node:${id}` });
    // The node's reporter retries a refused report (409 mid-transition), as the real one does.
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  });

  // The simulated deploy agents and installed systems go through bootorch's own functions: the ticket
  // their boot script would carry (a boot window opened as a standalone power-on does), the exchange,
  // the heartbeat with the credential's scope checked as the deployHeartbeat mutation does, the
  // config drive as the boot routes serve it.
  const credential = async (token: string, id: string, field: string) => {
    const p = await verifyApiToken(db.db, token);
    if (isAuthFailure(p)) throw new Error(`401: ${p.message}`);
    const a = authorize(p, field, { id });
    if (!a.ok) throw new Error(`${a.code}: ${a.reason}`);
    return p;
  };
  world.setDeployHandlers({
    async bootTicket(id) {
      const { ticket, hash } = newTicket();
      const now = new Date();
      await issueTicket(db.db, id, 'deploy', { hash, now, expiresAt: new Date(now.getTime() + 600_000), attempt: newAttemptId() });
      return ticket;
    },
    async exchange(ticket) {
      const r = await exchangeTicket(db.db, ticket, { ttlSeconds: 3600 });
      if (!r.ok) throw new Error(`HTTP ${r.status}: ${r.message}`);
      return r.token;
    },
    async heartbeat(id, hb, token) {
      const sender = heartbeatSender(await credential(token, id, 'deployHeartbeat'));
      const r = await deployHeartbeat(
        db.db,
        engine.scheduler,
        { id, ...hb, actor: `node:${id}`, sender },
        { heartbeatTimeoutSeconds: 300 },
      );
      if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
      return r.deploy;
    },
    async configDrive(id, token) {
      const p = await credential(token, id, 'deployHeartbeat');
      if (p.scope && p.scope !== 'deploy') throw new Error(`403: a ${p.scope} credential may not read the config drive`);
      const r = await nodeConfigDrive(db.db, id);
      if (!r.ok) throw new Error(`HTTP ${r.status}: ${r.message}`);
      return r.image;
    },
  });

  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  await listener.query(`listen ${EVENTS_CHANNEL}`);
  const waiters = new Set<() => void>();
  listener.on('notification', () => {
    for (const w of [...waiters]) w();
  });

  // Events wake the check; the 100 ms poll covers changes that write no event (sessions table).
  const waitFor = (cond: () => Promise<boolean>, what: string, timeoutMs = 30_000) =>
    waitOn(cond, what, timeoutMs, undefined, 100, waiters).then(() => undefined);

  const cluster: Cluster = {
    db,
    world,
    adapters,
    engine,
    waitFor,
    async template(name, t = {}) {
      const bootSet: Record<string, unknown> = {
        path: world.defaultImage.manifest,
        type: 's3',
        arch: t.arch ?? 'X86',
        kernel_parameters: 'console=ttyS0,115200',
      };
      if (t.deploy) bootSet.deploy = t.deploy;
      if (t.groups) bootSet.node_groups = t.groups;
      else bootSet.node_list = t.nodes ?? world.ids();
      await db.pool.query(
        `insert into session_templates (name, enable_cfs, cfs_configuration, boot_sets, rollout)
        values ($1, true, $2, $3, $4)`,
        [name, t.configuration ?? 'compute-cfg', JSON.stringify({ compute: bootSet }), t.rollout ? JSON.stringify(t.rollout) : null],
      );
    },
    async session(name, s) {
      const c = await db.pool.connect();
      try {
        await c.query('begin');
        // The policy merged over the template's at create, as createSession does.
        const template = (await c.query('select rollout from session_templates where name = $1', [s.template])).rows[0];
        const rollout = mergeRollout(template?.rollout ?? null, (s.rollout as RolloutPolicy | undefined) ?? null);
        await c.query(
          `insert into sessions (name, operation, template_name, "limit", stage, rollout)
          values ($1, $2, $3, $4, $5, $6)`,
          [name, s.operation, s.template, s.limit ?? '', s.stage ?? false, rollout ? JSON.stringify(rollout) : null],
        );
        await c.query('commit');
      } finally {
        c.release();
      }
      await engine.scheduler.kick(db.db, ['session-setup']);
    },
    async waitForSession(name, timeoutMs = 30_000) {
      let row: SessionRow | undefined;
      await waitFor(
        async () => {
          row = (await db.pool.query('select name, status, error, components from sessions where name = $1', [name])).rows[0];
          return row?.status === 'complete';
        },
        `session ${name} complete`,
        timeoutMs,
      );
      return row!;
    },
    async components(ids) {
      const r = ids
        ? await db.pool.query('select * from components where id = any($1::text[]) order by id', [ids])
        : await db.pool.query('select * from components order by id');
      return r.rows;
    },
    async events(f = {}) {
      const r = await db.pool.query(
        `select * from component_events where ($1::text is null or session = $1)
        and ($2::text is null or component_id = $2) order by id`,
        [f.session ?? null, f.component ?? null],
      );
      return r.rows;
    },
    async close() {
      world.close();
      await engine.stop();
      await listener.end();
      await db.drop();
    },
  };
  return cluster;
}
