/**
 * The map's live update path, kept in this one module: the snapshot (`components`, paged) and the
 * `componentEventBatches` subscription that keeps it current, each message a window's events (a
 * full-machine boot is hundreds of messages, not hundreds of thousands).
 *
 * Order of work: the subscription starts first ("from now on") and its events are held; then the
 * snapshot is read; then the held events are applied in log order on top of it. An event older than
 * the snapshot re-applies a state the snapshot already holds, and every later change follows it, so
 * the map ends where the log ends. (A change committed between the server reading the snapshot's last
 * page and registering the subscription is the one window.) After graphql-ws reconnects, the same is
 * done again: hold, re-read the snapshot, apply.
 * Live events are applied at most once per animation frame, however many arrive.
 */
import type { Client, OperationResult } from 'urql';
import type { ApiClient } from '../client.ts';
import type { ConsoleComponentsQuery } from '../gql/graphql.ts';
import { ComponentEventBatchesSubscription, ComponentsPage } from '../queries.ts';
import type { NodeChange, NodeRow, NodeStore } from '../map/store.ts';
import { mapStats } from '../map/stats.ts';

const PAGE = 10_000;

export interface LiveMap {
  /** Resolves when the first full snapshot is in the store. */
  ready: Promise<void>;
  stop(): void;
}

async function readSnapshot(client: Client): Promise<NodeRow[]> {
  const rows: NodeRow[] = [];
  let after: string | null = null;
  for (;;) {
    const r: OperationResult<ConsoleComponentsQuery> = await client
      .query(ComponentsPage, { first: PAGE, after }, { requestPolicy: 'network-only' })
      .toPromise();
    if (r.error) throw r.error;
    const page: ConsoleComponentsQuery['components'] = r.data!.components;
    rows.push(...page.nodes);
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return rows;
    after = page.pageInfo.endCursor;
  }
}

export function startLiveMap(api: ApiClient, store: NodeStore, onError: (e: Error) => void): LiveMap {
  const { client } = api;
  let held: NodeChange[] | null = [];
  let pending: NodeChange[] = [];
  let frame = 0;
  const flush = () => {
    frame = 0;
    const batch = pending;
    pending = [];
    store.apply(batch);
    mapStats.liveEvents += batch.length;
  };

  const sub = client.subscription(ComponentEventBatchesSubscription, {}).subscribe((r) => {
    if (r.error) {
      onError(r.error);
      return;
    }
    const events = r.data?.componentEventBatches.events;
    if (!events?.length) return;
    if (held) {
      held.push(...events);
      return;
    }
    pending.push(...events);
    if (!frame) frame = requestAnimationFrame(flush);
  });

  // Hold live events, read the snapshot, then apply what was held on top of it.
  const resync = () => {
    held ??= [];
    const done = readSnapshot(client).then((rows) => {
      store.load(rows);
      store.apply(held ?? []);
      mapStats.liveEvents += held?.length ?? 0;
      held = null;
    });
    done.catch((e: Error) => onError(e));
    return done;
  };
  const ready = resync();
  // After a lost socket graphql-ws subscribes again "from now on": what happened meanwhile comes from a new snapshot.
  const offReconnect = api.onReconnect(() => void resync());

  return {
    ready,
    stop() {
      offReconnect();
      sub.unsubscribe();
      if (frame) cancelAnimationFrame(frame);
    },
  };
}
