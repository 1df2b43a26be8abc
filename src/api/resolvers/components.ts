/**
 * Components: keyset-paged reads, and writes that all go through db/components/write.ts
 * (auto fields, events) inside one transaction, kicking `status` in it when the write gives status work.
 */
import { z } from 'zod';
import { transaction } from '../../db/tx.ts';
import { databaseNow, type Db } from '../../db/client.ts';
import type { ComponentRow } from '../../db/schema.ts';
import {
  countComponents,
  deleteComponent,
  getComponent,
  listComponents,
  lockComponents,
  lockSessionComponents,
  type ComponentOrder,
} from '../../db/components/read.ts';
import { writeComponents, type ComponentWrite, type WriteOptions } from '../../db/components/write.ts';
import { applyStaged } from '../../db/components/staged.ts';
import { reportBootState } from '../../engine/reports.ts';
import { getOptions } from '../../db/options.ts';
import { visibleIds } from '../../db/tenants.ts';
import { appendEvents } from '../../db/events.ts';
import { checkComponentId, checkComponentIds, checkComponentInput, refusesActualStateWrite } from '../../domain/components.ts';
import { check, text, type Issue } from '../../domain/validation.ts';
import { badInput, conflict, notFound, valueOrThrow } from '../errors.ts';
import { componentView, decodeCursor, decodeOrderedCursor, encodeCursor, encodeOrderedCursor } from '../views.ts';
import { limitIds } from '../limit-search.ts';
import { readMachineMap } from '../../db/components/map.ts';
import type { ApiContext } from '../context.ts';
import type { ComponentPhase, ComponentStatus, Resolvers } from '../generated/types.ts';

/** An xname prefix (a cabinet, chassis, slot or node): letters and digits. */
const ID_PREFIX = text(1, 64).regex(/^[A-Za-z0-9]+$/, 'letters and digits only (an xname or its start)');

/** A node's BSS referral token (built once: every report checks it). */
const BSS_TOKEN = text(1, 65535);

const MAX_PAGE = 10_000;

/** The last-change bounds of a component filter: whole seconds, up to ten years. */
const AGE_SECONDS = z
  .number()
  .int('must be a whole number of seconds')
  .min(1, 'must be at least 1')
  .max(315_360_000, 'must be at most 315360000 (ten years)');

/** The filter's last-change bounds, checked; a window that holds no time is refused, naming unchangedForSeconds. */
function changeBounds(f: { changedWithinSeconds?: number | null; unchangedForSeconds?: number | null } | null | undefined) {
  const within =
    f?.changedWithinSeconds == null ? null : valueOrThrow(check(AGE_SECONDS, f.changedWithinSeconds, 'filter.changedWithinSeconds'));
  const unchanged =
    f?.unchangedForSeconds == null ? null : valueOrThrow(check(AGE_SECONDS, f.unchangedForSeconds, 'filter.unchangedForSeconds'));
  if (within !== null && unchanged !== null && unchanged >= within)
    throw badInput([
      { field: 'filter.unchangedForSeconds', message: `must be less than changedWithinSeconds (${within}): no time is in both` },
    ]);
  return { changedWithinSeconds: within, unchangedForSeconds: unchanged };
}

/**
 * The transaction's time on the database's clock (what now() stamps in it): the engine measures the
 * waits from these stamps with the same clock (engine/clock.ts).
 */
const transactionTime = async (tx: Db) => new Date(await databaseNow(tx));

/** Write and kick in the caller's transaction; returns the written rows. */
async function write(tx: Db, ctx: ApiContext, writes: ComponentWrite[], mode: WriteOptions['mode']) {
  const r = await writeComponents(tx, writes, { mode, actor: ctx.actor, tenantKey: ctx.tenantKey, now: await transactionTime(tx) });
  if (r.kickStatus) await ctx.scheduler.kick(tx, ['status']);
  return r;
}

const input = (i: object, prefix = '') => valueOrThrow(checkComponentInput(i as Record<string, unknown>, prefix));

export const componentResolvers: Resolvers = {
  Query: {
    components: async (_p, { filter, first, after, orderBy, descending }, ctx) => {
      await ctx.requireKnownTenant();
      const size = first ?? 1000;
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE)
        throw badInput([{ field: 'first', message: `must be from 1 to ${MAX_PAGE}` }]);
      const by = (orderBy ?? 'id') as ComponentOrder;
      const desc = descending ?? false;
      const plain = by === 'id' && !desc;
      // Ascending id keeps its plain cursor (BOS clients and REST page with it); other orders carry their sort key.
      const start =
        after == null
          ? null
          : plain
            ? ((id) => (id === null ? null : { key: id, id }))(decodeCursor(after))
            : decodeOrderedCursor(after, by, desc);
      if (after != null && start === null)
        throw badInput([{ field: 'after', message: 'is not a cursor this API gave out for this order' }]);
      let ids = filter?.ids ? valueOrThrow(checkComponentIds(filter.ids, 'filter.ids', 65535)) : null;
      if (filter?.limit) {
        const named = await limitIds(ctx, filter.limit);
        ids = ids ? ids.filter((id) => named.has(id)) : [...named];
      }
      if (filter?.idPrefix != null) valueOrThrow(check(ID_PREFIX, filter.idPrefix, 'filter.idPrefix'));
      const changed = changeBounds(filter);
      const query = {
        ids,
        session: filter?.session,
        stagedSession: filter?.stagedSession,
        enabled: filter?.enabled,
        phase: filter?.phase,
        status: filter?.status,
        failureReason: filter?.failureReason,
        idPrefix: filter?.idPrefix?.toLowerCase(),
        ...changed,
        tenant: ctx.tenant,
      };
      const page = await listComponents(ctx.db, query, { first: size, order: by, descending: desc, after: start });
      return { ...page, query, order: plain ? undefined : { by, descending: desc, lastKey: page.lastKey } };
    },
    machineMap: async (_p, _a, ctx) => {
      await ctx.requireKnownTenant();
      // The mark first: every event up to it is committed, so the read that follows includes its change.
      const cursor = ctx.live ? (await ctx.live.ready(), ctx.live.mark) : null;
      const m = await readMachineMap(ctx.db, ctx.tenant);
      // Statuses and phases as stored are the enums' values (api/enums.ts).
      return {
        ...m,
        cursor: cursor === null ? null : String(cursor),
        statuses: m.statuses as ComponentStatus[],
        phases: m.phases as ComponentPhase[],
      };
    },
    component: async (_p, { id }, ctx) => {
      await ctx.requireKnownTenant();
      const row = await getComponent(ctx.db, valueOrThrow(checkComponentId(id)), ctx.tenant);
      return row ? componentView(row) : null;
    },
  },
  ComponentConnection: {
    nodes: (p) => p.rows.map(componentView),
    edges: (p) => p.rows.map((r) => ({ cursor: encodeCursor(r.id), node: componentView(r) })),
    pageInfo: (p) => {
      const last = p.rows.at(-1);
      const end = !last
        ? null
        : p.order
          ? encodeOrderedCursor(p.order.by, p.order.descending, { key: p.order.lastKey ?? '', id: last.id })
          : encodeCursor(last.id);
      return { hasNextPage: p.hasNextPage, endCursor: end };
    },
    totalCount: (p, _a, ctx) => countComponents(ctx.db, p.query),
  },
  Mutation: {
    putComponent: async (_p, args, ctx) => {
      const id = valueOrThrow(checkComponentId(args.id));
      const body = input(args.input, 'input');
      const r = await transaction(ctx.db, (tx) => write(tx, ctx, [{ id, body }], 'put'));
      return componentView(r.rows[0]!);
    },
    putComponents: async (_p, { components }, ctx) => {
      const errors: Issue[] = [];
      const writes = components.map(({ id, ...rest }, i) => {
        const cid = checkComponentId(id, `components[${i}].id`);
        const body = checkComponentInput(rest, `components[${i}]`);
        if (!cid.ok) errors.push(...cid.errors);
        if (!body.ok) errors.push(...body.errors);
        return cid.ok && body.ok ? { id: cid.value, body: body.value } : null;
      });
      if (errors.length) throw badInput(errors);
      const r = await transaction(ctx.db, (tx) => write(tx, ctx, writes as ComponentWrite[], 'put'));
      return r.rows.map(componentView);
    },
    patchComponent: async (_p, args, ctx) => {
      await ctx.requireKnownTenant();
      const id = valueOrThrow(checkComponentId(args.id));
      const body = input(args.patch, 'patch');
      const r = await transaction(ctx.db, async (tx) => {
        const [current] = await lockComponents(tx, [id]);
        if (!current || !(await visibleIds(tx, ctx.tenant, [id])).has(id)) throw notFound('component', id);
        if (body.actualState && refusesActualStateWrite(current)) throw refused(current);
        return write(tx, ctx, [{ id, body }], 'patch');
      });
      return componentView(r.rows[0]!);
    },
    patchComponents: async (_p, { filter, patch, skipBadIds }, ctx) => {
      await ctx.requireKnownTenant();
      const byIds = filter.ids != null;
      if (byIds === (filter.session != null)) throw badInput([{ field: 'filter', message: 'give exactly one of ids and session' }]);
      if (!byIds) valueOrThrow(check(text(1, 127), filter.session, 'filter.session'));
      const body = input(patch, 'patch');
      const r = await transaction(ctx.db, async (tx) => {
        let ids: string[];
        if (byIds) {
          ids = valueOrThrow(checkComponentIds(filter.ids!, 'filter.ids', 65535));
          const visible = await visibleIds(tx, ctx.tenant, ids);
          const existing = new Set((await lockComponents(tx, [...visible])).map((c) => c.id));
          const bad = ids.filter((id) => !existing.has(id));
          if (bad.length && !skipBadIds) throw notFound('component', bad.slice(0, 10).join(',') + (bad.length > 10 ? '...' : ''));
          ids = ids.filter((id) => existing.has(id));
        } else {
          ids = await lockSessionComponents(tx, filter.session!, ctx.tenant);
        }
        return write(
          tx,
          ctx,
          ids.map((id) => ({ id, body })),
          'patch',
        );
      });
      return r.rows.map(componentView);
    },
    deleteComponent: async (_p, args, ctx) => {
      await ctx.requireKnownTenant();
      const id = valueOrThrow(checkComponentId(args.id));
      await transaction(ctx.db, async (tx) => {
        const gone = await deleteComponent(tx, id, ctx.tenant);
        if (!gone) throw notFound('component', id);
        await appendEvents(tx, [
          {
            componentId: id,
            session: gone.session,
            sessionTenant: gone.sessionTenant,
            kind: 'manual',
            actor: ctx.actor,
            fromPhase: gone.phase,
            fromStatus: gone.status,
            reason: 'deleted',
          },
        ]);
      });
      return true;
    },
    applyStaged: async (_p, { xnames }, ctx) => {
      await ctx.requireKnownTenant();
      const ids = valueOrThrow(checkComponentIds(xnames, 'xnames', 32768));
      return transaction(ctx.db, async (tx) => {
        const opts = await getOptions(tx);
        const r = await applyStaged(tx, {
          ids,
          tenant: ctx.tenant,
          actor: ctx.actor,
          clearStage: opts.clear_stage,
          now: await transactionTime(tx),
        });
        if (r.kickStatus) await ctx.scheduler.kick(tx, ['status']);
        return { succeeded: r.succeeded, failed: r.failed.map((f) => f.id), ignored: r.ignored, failures: r.failed };
      });
    },
    reportBootState: async (_p, { id, bssToken }, ctx) => {
      valueOrThrow(check(BSS_TOKEN, bssToken, 'bssToken'));
      const canonical = checkComponentId(id);
      if (canonical.ok && ctx.tenant !== null && !(await visibleIds(ctx.db, ctx.tenant, [canonical.value])).has(canonical.value)) {
        return { __typename: 'ReportRefused', code: 'NOT_FOUND', message: `no component "${canonical.value}"` };
      }
      const input = { id, token: bssToken, actor: ctx.actor };
      const r = ctx.reports ? await ctx.reports.report(input, ctx.logger) : await reportBootState(ctx.db, ctx.scheduler, input);
      return r.ok
        ? { __typename: 'BootStateReported', componentId: r.id, tokenKnown: r.tokenKnown }
        : { __typename: 'ReportRefused', code: r.code, message: r.message };
    },
  },
  ReportBootStateResult: {
    __resolveType: (o) => ('componentId' in o ? 'BootStateReported' : 'ReportRefused'),
  },
  BootStateReported: {
    // Read after the report's commit: the component as it is now (the report's own write, or a later one).
    component: async (p, _a, ctx) => {
      const row = await getComponent(ctx.db, p.componentId, ctx.tenant);
      if (!row) throw notFound('component', p.componentId);
      return componentView(row);
    },
  },
};

function refused(c: ComponentRow) {
  return conflict(
    `Actual state can not be updated: ${c.id} is ${c.status} after ${c.lastAction || 'no action'}; bootorch is mid-transition`,
    'patch.actualState',
  );
}
