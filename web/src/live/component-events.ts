/**
 * The map's live update path, kept in this one module: the snapshot (`machineMap`, one compact
 * answer with the event-log cursor it includes every change up to) and the `componentEventBatches`
 * subscription from that cursor, each message a window's events (a full-machine boot is hundreds of
 * messages, not hundreds of thousands). Every change after the snapshot arrives once, in order.
 *
 * When the live socket closes, the map is stale: the status says since when (the banner shows the
 * data's age). graphql-ws keeps reconnecting; the subscription is made again from the last cursor
 * received, so the API first replays what was missed, then goes on live. Should the replay be refused
 * (a cursor the API no longer accepts), the snapshot is read again.
 * Live events are applied at most once per animation frame, however many arrive.
 */
import { stringifyDocument } from 'urql';
import { apiFetch, type ApiClient } from '../client.ts';
import type { ConsoleMachineMapQuery } from '../gql/graphql.ts';
import { ComponentEventBatchesSubscription, MachineMapQuery } from '../queries.ts';
import type { NodeChange, NodeStore } from '../map/store.ts';
import { mapStats } from '../map/stats.ts';

export interface LiveStatus {
  /** The live socket is up (or was never lost). */
  connected: boolean;
  /** When the data stopped being live (ms since the epoch), while not connected. */
  staleSince: number | null;
}

export interface LiveMap {
  /** Resolves when the first full snapshot is in the store. */
  ready: Promise<void>;
  status(): LiveStatus;
  onStatus(cb: (s: LiveStatus) => void): () => void;
  stop(): void;
}

type Snapshot = ConsoleMachineMapQuery['machineMap'];

/** A snapshot asked for before the console is up (while the stored token is being checked), by token. */
let early: { token: string; snapshot: Promise<Snapshot | null> } | null = null;

/**
 * Ask for the snapshot now, beside the sign-in check: the first map then waits for the slower of the
 * two, not for both in turn. Used once, by the first startLiveMap with the same token.
 */
export function prefetchMachineMap(token: string): void {
  mapStats.step('snapshot asked');
  const snapshot = apiFetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ operationName: 'ConsoleMachineMap', query: stringifyDocument(MachineMapQuery) }),
  })
    .then(async (r) => ((await r.json()) as { data?: ConsoleMachineMapQuery }).data?.machineMap ?? null)
    .catch(() => null);
  early = { token, snapshot };
}

export function startLiveMap(api: ApiClient, store: NodeStore, onError: (e: Error) => void, token?: string): LiveMap {
  const { client } = api;
  let pending: (NodeChange & { at?: string })[] = [];
  let frame = 0;
  let cursor: string | null = null;
  let subscribedFrom: string | null | undefined;
  let sub: { unsubscribe(): void } | null = null;
  let stopped = false;
  let status: LiveStatus = { connected: true, staleSince: null };
  const listeners = new Set<(s: LiveStatus) => void>();
  const setStatus = (s: LiveStatus) => {
    status = s;
    for (const l of listeners) l(s);
  };

  const flush = () => {
    frame = 0;
    const batch = pending;
    pending = [];
    store.apply(batch);
    mapStats.applied(batch.map((e) => (e.at ? Date.parse(e.at) : Number.NaN)));
  };

  const subscribe = (after: string | null) => {
    sub?.unsubscribe();
    subscribedFrom = after;
    sub = client.subscription(ComponentEventBatchesSubscription, { after }).subscribe((r) => {
      if (r.error) {
        onError(r.error);
        // A replay the API refuses: start again from a fresh snapshot.
        if (r.error.graphQLErrors.some((g) => g.extensions?.code === 'BAD_USER_INPUT')) void load();
        return;
      }
      const b = r.data?.componentEventBatches;
      if (!b?.events.length) return;
      cursor = b.cursor;
      mapStats.received(b.events.map((e) => Date.parse(e.at)));
      pending.push(...b.events);
      if (!frame) frame = requestAnimationFrame(flush);
    });
  };

  const load = async () => {
    sub?.unsubscribe();
    sub = null;
    const prefetched = early && early.token === token ? await early.snapshot : null;
    early = null;
    let m = prefetched;
    if (!m) {
      mapStats.step('snapshot asked');
      const r = await client.query(MachineMapQuery, {}, { requestPolicy: 'network-only' }).toPromise();
      if (r.error) throw r.error;
      m = r.data!.machineMap;
    }
    if (stopped) return;
    mapStats.step('snapshot received');
    store.load(m);
    mapStats.step('snapshot loaded');
    cursor = m.cursor ?? null;
    subscribe(cursor);
  };
  // The first snapshot, asked again every 2 s while the API cannot give it.
  const ready = new Promise<void>((resolve) => {
    const attempt = () =>
      load().then(resolve, (e: Error) => {
        onError(e);
        if (!stopped) setTimeout(attempt, 2000);
      });
    attempt();
  });

  const offClosed = api.onClosed(() => {
    if (status.connected) setStatus({ connected: false, staleSince: Date.now() });
    // Ask again from where the data stops; graphql-ws sends it once the socket is back.
    if (cursor !== subscribedFrom && sub) subscribe(cursor);
  });
  const offReconnect = api.onReconnect(() => setStatus({ connected: true, staleSince: null }));

  return {
    ready,
    status: () => status,
    onStatus(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    stop() {
      stopped = true;
      offClosed();
      offReconnect();
      sub?.unsubscribe();
      if (frame) cancelAnimationFrame(frame);
    },
  };
}
