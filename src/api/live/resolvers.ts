/**
 * Subscription resolvers: check the arguments (zod / domain checks at the edge), wait for the
 * process's live feed, and hand graphql-ws a stream; the streams do the rest.
 */
import { z } from 'zod';
import { readSessionStatus } from '../../db/sessions/status.ts';
import { readEventsPage, type EventFilter, type LiveEvent } from '../../db/live.ts';
import { tenantXnames } from '../../db/tenants.ts';
import { checkComponentIds } from '../../domain/components.ts';
import { check } from '../../domain/validation.ts';
import { isEnumValue } from '../enums.ts';
import { badInput, notFound, valueOrThrow } from '../errors.ts';
import type { ApiContext } from '../context.ts';
import type { ComponentEvent, ComponentEventBatch, ComponentEventFilter, Resolvers } from '../generated/types.ts';
import { LiveSubscriber, type EventBatch } from './subscriber.ts';
import { followProgress } from './progress-stream.ts';
import { observeStream, trackSubscription } from '../../observability/live.ts';
import type { LiveFeed } from './feed.ts';
import { unavailableError } from '../unavailable.ts';

const cursorSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'is not a cursor this API gave out')
  .transform(Number);
const kindsSchema = z.array(z.string().min(1).max(32)).max(32);
const firstSchema = z.number().int().min(1, 'must be from 1 to 1000').max(1000, 'must be from 1 to 1000');

function feedOf(ctx: ApiContext): LiveFeed {
  if (!ctx.live) throw unavailableError('subscriptions are not served by this process');
  return ctx.live;
}

/** The stored event in the GraphQL shape; a phase or status this API does not know shows as null. */
export function eventView(e: LiveEvent): ComponentEvent {
  return {
    cursor: String(e.id),
    at: e.at,
    componentId: e.componentId,
    session: e.session,
    sessionTenant: e.sessionTenant || null,
    kind: e.kind,
    actor: e.actor,
    fromPhase: e.fromPhase !== null && isEnumValue('ComponentPhase', e.fromPhase) ? e.fromPhase : null,
    toPhase: e.toPhase !== null && isEnumValue('ComponentPhase', e.toPhase) ? e.toPhase : null,
    fromStatus: e.fromStatus !== null && isEnumValue('ComponentStatus', e.fromStatus) ? e.fromStatus : null,
    toStatus: e.toStatus !== null && isEnumValue('ComponentStatus', e.toStatus) ? e.toStatus : null,
    action: e.action,
    error: e.error,
    reason: e.reason,
  };
}

/** A batch in the GraphQL shape (never empty: the last event's cursor resumes after it). */
export function batchView(b: EventBatch): ComponentEventBatch {
  return { events: b.events.map(eventView), cursor: String(b.events.at(-1)!.id) };
}

function eventFilter(f: ComponentEventFilter | null | undefined, ctx: ApiContext): EventFilter {
  return {
    ids: f?.ids ? valueOrThrow(checkComponentIds(f.ids, 'filter.ids', 65535)) : null,
    session: f?.session ?? null,
    sessionTenant: ctx.tenantKey,
    phase: f?.phase ?? null,
    status: f?.status ?? null,
    kinds: f?.kinds ? valueOrThrow(check(kindsSchema, f.kinds, 'filter.kinds')) : null,
    tenant: ctx.tenant,
  };
}

/** The same filter, in memory, for live events (`owned`: the tenant's xnames, when there is a tenant). */
export function eventMatcher(f: EventFilter, owned: Set<string> | null): (e: LiveEvent) => boolean {
  const ids = f.ids ? new Set(f.ids) : null;
  const kinds = f.kinds ? new Set(f.kinds) : null;
  return (e) =>
    (!ids || ids.has(e.componentId)) &&
    (f.session == null || (e.session === f.session && e.sessionTenant === (f.sessionTenant ?? ''))) &&
    (f.phase == null || e.fromPhase === f.phase || e.toPhase === f.phase) &&
    (f.status == null || e.fromStatus === f.status || e.toStatus === f.status) &&
    (!kinds || kinds.has(e.kind)) &&
    (!owned || owned.has(e.componentId));
}

/**
 * The subscriber of componentEvents (one message per event) or componentEventBatches; it joins the
 * multiplexer group of everyone with the same document, variables and visibility (subscribe.ts).
 */
async function liveEvents(
  ctx: ApiContext,
  filter: ComponentEventFilter | null | undefined,
  after: string | null | undefined,
  batched: boolean,
): Promise<LiveSubscriber> {
  const feed = feedOf(ctx);
  await ctx.requireKnownTenant();
  const f = eventFilter(filter, ctx);
  const cursor = after == null ? null : valueOrThrow(check(cursorSchema, after, 'after'));
  const owned = ctx.tenant === null ? null : await tenantXnames(ctx.db, ctx.tenant);
  await feed.ready();
  const p = ctx.auth?.principal;
  const visibility = JSON.stringify([p && 'role' in p ? p.role : null, p && 'node' in p ? (p.node ?? null) : null, ctx.tenant]);
  let sub: LiveSubscriber | undefined;
  const tracker = trackSubscription(batched ? 'componentEventBatches' : 'componentEvents', () => sub?.queuedEvents ?? 0);
  sub = new LiveSubscriber({ feed, db: ctx.db, filter: f, matches: eventMatcher(f, owned), after: cursor, batched, visibility, tracker });
  return sub;
}

export const liveResolvers: Resolvers = {
  Query: {
    componentEvents: async (_p, { filter, after, first }, ctx) => {
      await ctx.requireKnownTenant();
      const f = eventFilter(filter, ctx);
      const cursor = after == null ? 0 : valueOrThrow(check(cursorSchema, after, 'after'));
      const size = valueOrThrow(check(firstSchema, first ?? 100, 'first'));
      // As far as the feed has settled the log, so a page never shows a hole that fills later.
      const feed = ctx.live;
      const upTo = feed ? (await feed.ready(), feed.mark) : Number.MAX_SAFE_INTEGER;
      return (await readEventsPage(ctx.db, f, cursor, upTo, size)).map(eventView);
    },
  },
  Subscription: {
    componentEvents: {
      subscribe: (_p, { filter, after }, ctx) => liveEvents(ctx, filter, after, false),
      resolve: (e: LiveEvent) => eventView(e),
    },
    componentEventBatches: {
      subscribe: (_p, { filter, after }, ctx) => liveEvents(ctx, filter, after, true),
      resolve: (b: EventBatch) => batchView(b),
    },
    sessionProgress: {
      subscribe: async (_p, { name }, ctx) => {
        const feed = feedOf(ctx);
        if (!name) throw badInput([{ field: 'name', message: 'must not be empty' }]);
        const key = { tenantKey: ctx.tenantKey, name };
        await feed.ready();
        const read = () => readSessionStatus(ctx.db, key);
        // Follow the session's shared reader first, then read: a change between the two causes one more
        // shared read, never a miss.
        const stream = followProgress(feed, key, read, {
          onError: (e) => ctx.logger?.warn({ err: (e as Error).message, session: name }, 'sessionProgress: status read failed'),
        });
        const readAt = Date.now();
        const first = await read().catch(async (e) => {
          await stream.return();
          throw e;
        });
        if (!first) {
          await stream.return();
          throw notFound('session', name);
        }
        return observeStream('sessionProgress', stream.start(first, readAt));
      },
      resolve: (s: unknown) => s,
    },
  },
} as Resolvers;
