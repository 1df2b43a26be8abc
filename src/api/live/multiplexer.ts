/**
 * Multiplexed live subscriptions (Hasura's live-query multiplexing, for an event stream): the
 * subscribers whose document, variables (but for the resume cursor) and visibility (role, tenant) are
 * the same form one group. A group listens to the feed once, matches each event once, and per flush
 * executes the document once and serializes the result once; each subscriber only queues a reference
 * to the payload and writes it to its socket (subscriber.ts, ws-server.ts).
 *
 * componentEventBatches groups send at most one message per window (`windowMs`) of at most `maxBatch`
 * events: what arrives after a quiet window goes out at once (a lone change waits for nothing), what
 * arrives within a window of the last message waits for the window's end and goes with the rest.
 * componentEvents groups flush each feed read at once, one message per event.
 * Different filters are different groups and get exactly their events.
 */
import { GraphQLError, Kind, type ExecutionArgs, type ExecutionResult, type OperationDefinitionNode } from 'graphql';
import { graphqlRuntime } from './graphql-runtime.ts';
import type { LiveEvent } from '../../db/live.ts';
import type { GroupLink, LiveRoot, LiveSubscriber, LiveSubscriberOptions, SharedPayload } from './subscriber.ts';

export interface MultiplexerOptions extends LiveSubscriberOptions {
  /** Shortest time between two messages of a batch group, ms (default 100): events arriving sooner wait for it. */
  windowMs?: number;
  /** Most events in one batch message (default 1000). */
  maxBatch?: number;
}

export interface MultiplexerStats {
  groups: number;
  subscribers: number;
  /** Subscribers receiving live payloads (the others read the log). */
  live: number;
  /** Executions of a subscription document for a group (one per message sent to the whole group). */
  executions: number;
  /** Live events queued for subscribers, summed (each a reference to a shared payload). */
  queuedEvents: number;
  /** The longest queue of one subscriber, in events (bounded by maxQueue). */
  longestQueue: number;
  /** Times a subscriber fell behind and went back to the log. */
  fellBehind: number;
}

/** The JSON of a result as graphql-ws sends it (errors in their toJSON form). */
export function resultJson(r: ExecutionResult): string {
  const { errors, ...rest } = r;
  return JSON.stringify(errors ? { ...rest, errors: errors.map((e) => e.toJSON()) } : rest);
}

export class Multiplexer {
  executions = 0;
  private readonly groups = new Map<string, Group>();
  private readonly stateListeners = new Set<() => void>();
  readonly windowMs: number;
  readonly maxBatch: number;

  constructor(readonly options: MultiplexerOptions = {}) {
    this.windowMs = options.windowMs ?? 100;
    this.maxBatch = options.maxBatch ?? 1000;
  }

  /** Put a subscriber in the group of its (document, variables, visibility) and start it. */
  add(sub: LiveSubscriber, args: ExecutionArgs): void {
    const key = groupKey(args, sub.request.visibility, sub.request.batched);
    let g = this.groups.get(key);
    if (!g) {
      g = new Group(this, key, sub, args);
      this.groups.set(key, g);
    }
    g.add(sub);
  }

  /** Called after every join, leave and message sent: tests wait on it. */
  onState(fn: () => void): () => void {
    this.stateListeners.add(fn);
    return () => {
      this.stateListeners.delete(fn);
    };
  }

  /** @internal by Group */
  changed(): void {
    for (const fn of [...this.stateListeners]) fn();
  }

  stats(): MultiplexerStats {
    const s: MultiplexerStats = {
      groups: this.groups.size,
      subscribers: 0,
      live: 0,
      executions: this.executions,
      queuedEvents: 0,
      longestQueue: 0,
      fellBehind: 0,
    };
    for (const g of this.groups.values()) {
      for (const m of g.members) {
        s.subscribers++;
        if (m.isLive) s.live++;
        s.queuedEvents += m.queuedEvents;
        s.longestQueue = Math.max(s.longestQueue, m.queuedEvents);
        s.fellBehind += m.fellBehind;
      }
    }
    return s;
  }

  /** @internal by Group */
  dropGroup(g: Group): void {
    if (this.groups.get(g.key) === g) this.groups.delete(g.key);
  }
}

class Group implements GroupLink {
  readonly members = new Set<LiveSubscriber>();
  private readonly live = new Set<LiveSubscriber>();
  private pending: LiveEvent[] = [];
  private timer?: NodeJS.Timeout;
  /** When the last message went out (ms): the next waits for the rest of its window. */
  private lastFlush = 0;
  private readonly offFeed: () => void;
  private readonly first: LiveSubscriber['request'];

  constructor(
    private readonly mux: Multiplexer,
    readonly key: string,
    first: LiveSubscriber,
    private readonly args: ExecutionArgs,
  ) {
    this.first = first.request;
    this.offFeed = this.first.feed.onEvents((batch) => this.onFeed(batch));
  }

  add(sub: LiveSubscriber): void {
    this.members.add(sub);
    sub.attach(this, this.mux.options);
  }

  join(sub: LiveSubscriber): void {
    // What is pending arrived at or below the feed mark the subscriber has read the log up to.
    this.flush();
    this.live.add(sub);
    this.mux.changed();
  }

  leave(sub: LiveSubscriber): void {
    this.live.delete(sub);
    this.mux.changed();
  }

  detach(sub: LiveSubscriber): void {
    this.live.delete(sub);
    this.members.delete(sub);
    if (this.members.size === 0) {
      this.offFeed();
      clearTimeout(this.timer);
      this.mux.dropGroup(this);
    }
    this.mux.changed();
  }

  private onFeed(batch: LiveEvent[]): void {
    if (this.live.size === 0) return; // the members read the log
    for (const e of batch) if (this.first.matches(e)) this.pending.push(e);
    if (this.pending.length === 0) return;
    if (!this.first.batched || this.pending.length >= this.mux.maxBatch) return this.flush();
    if (this.timer) return;
    const wait = this.lastFlush + this.mux.windowMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const events = this.pending;
    if (events.length === 0) return;
    this.pending = [];
    if (this.live.size === 0) return;
    this.lastFlush = Date.now();
    const out: SharedPayload[] = [];
    if (this.first.batched) {
      for (let i = 0; i < events.length; i += this.mux.maxBatch) {
        const chunk = events.slice(i, i + this.mux.maxBatch);
        out.push(this.run({ events: chunk }, chunk[0]!, chunk.at(-1)!.id, chunk.length));
      }
    } else {
      for (const e of events) out.push(this.run(e, e, e.id, 1));
    }
    for (const m of [...this.live]) m.push(out);
    this.mux.changed();
  }

  /** One execution and one serialization for every live member. */
  private run(root: LiveRoot, oldest: LiveEvent, lastId: number, count: number): SharedPayload {
    this.mux.executions++;
    const r = graphqlRuntime.execute({ ...this.args, rootValue: root });
    // Subscription fields resolve their root value synchronously (eventView, batchView).
    const result: ExecutionResult =
      r instanceof Promise ? { errors: [new GraphQLError('a live subscription field resolved asynchronously; it cannot be shared')] } : r;
    return { json: Buffer.from(resultJson(result)), lastId, count, oldestAt: new Date(oldest.at).getTime() };
  }
}

/**
 * Document, operation, variables without the one bound to `after` (the resume cursor is each
 * subscriber's own), visibility and shape. Variables are compared with sorted keys.
 */
function groupKey(args: ExecutionArgs, visibility: string, batched: boolean): string {
  const doc = args.document.loc?.source.body ?? JSON.stringify(args.document);
  const op = args.document.definitions.find(
    (d): d is OperationDefinitionNode =>
      d.kind === Kind.OPERATION_DEFINITION && (args.operationName == null || d.name?.value === args.operationName),
  );
  const field = op?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  const afterArg = field?.kind === Kind.FIELD ? field.arguments?.find((a) => a.name.value === 'after') : undefined;
  const cursorVar = afterArg?.value.kind === Kind.VARIABLE ? afterArg.value.name.value : undefined;
  const vars = Object.entries(args.variableValues ?? {}).filter(([k]) => k !== cursorVar);
  return JSON.stringify([doc, args.operationName ?? null, stable(Object.fromEntries(vars)), visibility, batched]);
}

function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, stable((v as Record<string, unknown>)[k])]),
    );
  return v;
}
