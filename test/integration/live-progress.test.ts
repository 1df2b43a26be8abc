/**
 * sessionProgress through a real graphql-ws client, on a whole bootorch (engine + simulated cluster)
 * in this process: statuses as the session moves, at most a few per second, ending with the saved
 * snapshot; failures show up in it; unknown sessions are refused.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { collect, wsClient } from '../helpers/live.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { testAuth } from '../helpers/auth.ts';
import { poolOf } from '../../src/db/client.ts';
import { LiveFeed } from '../../src/api/live/feed.ts';
import { progressStats } from '../../src/api/live/progress-stream.ts';

let c: Cluster | undefined;
let api: ApiServer | undefined;
let feed: LiveFeed | undefined;
/** connectionParams with an admin token (the server authenticates every subscription). */
let creds: Record<string, string> = {};
afterEach(async () => {
  await api?.close();
  await feed?.close();
  await c?.close();
  api = undefined;
  feed = undefined;
  c = undefined;
});

const PROGRESS = `subscription($n: String!) { sessionProgress(name: $n) {
  name status managedComponentsCount percentSuccessful percentFailed savedAt
  phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }
  failureReasons { key count ids } errorSummary { key count }
  timing { startTime endTime duration } } }`;

async function start(world: NonNullable<Parameters<typeof startCluster>[0]>['world'], options = {}) {
  c = await startCluster({ world, options });
  const auth = await testAuth(c.db.db);
  creds = auth.bearer(auth.adminToken);
  feed = new LiveFeed({ pool: poolOf(c.db.db) });
  api = await startApiServer({ db: c.db.db, scheduler: c.engine.scheduler, port: 0, host: '127.0.0.1', auth: auth.auth, live: feed });
  return { c, api };
}

describe('sessionProgress', () => {
  test('from pending to the final snapshot, coalesced, then the stream ends', async () => {
    const { c, api } = await start({ nodes: 6, initial: { booted: true }, powerOffDelayMs: 300, powerOnDelayMs: 300, bootDelayMs: 300 });
    await c.template('t');
    await c.session('r1', { template: 't', operation: 'reboot' });
    const client = wsClient(api.wsUrl, creds);
    try {
      const p = collect(client, PROGRESS, { n: 'r1' });
      // Two more subscribers of the same session share its one reader of the status.
      const others = [collect(client, PROGRESS, { n: 'r1' }), collect(client, PROGRESS, { n: 'r1' })];
      for (const x of [p, ...others]) await x.until((i) => i.length > 0, 'a first status');
      if (!p.completed) expect(progressStats(feed!)).toMatchObject({ sources: 1, followers: 3 });
      await p.until(() => p.completed, 'stream completes', 30_000);
      for (const x of others) {
        await x.until(() => x.completed, 'the others complete too');
        expect(x.items.at(-1)).toEqual(p.items.at(-1));
      }
      expect(progressStats(feed!)).toMatchObject({ sources: 0, followers: 0 });
      expect(p.errors).toEqual([]);
      const last = p.items.at(-1);
      expect(last).toMatchObject({ name: 'r1', status: 'COMPLETE', managedComponentsCount: 6, percentSuccessful: 100, percentFailed: 0 });
      expect(last.savedAt).not.toBeNull();
      expect(last.timing.endTime).not.toBeNull();
      // The final snapshot is what sessionStatus answers from now on, savedAt included.
      const r = await fetch(api.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...creds },
        body: JSON.stringify({
          query: PROGRESS.replace(/^subscription/, 'query').replace('sessionProgress', 'sessionStatus'),
          variables: { n: 'r1' },
        }),
      });
      expect(((await r.json()) as any).data.sessionStatus).toEqual(last);
      // Progress was seen on the way, not only the two ends.
      expect(p.items.length).toBeGreaterThanOrEqual(3);
      expect(p.items.some((s) => s.status === 'RUNNING' && s.phases.percentComplete < 100)).toBe(true);
      const complete = p.items.map((s) => s.phases.percentComplete);
      expect(complete).toEqual([...complete].sort((a, b) => a - b));
      // No two updates in a row are the same, and they come at most about 4 per second.
      for (let i = 1; i < p.items.length; i++) {
        const strip = (s: any) => JSON.stringify({ ...s, timing: { ...s.timing, duration: '' } });
        expect(strip(p.items[i])).not.toBe(strip(p.items[i - 1]));
        if (i > 1) expect(p.arrivedAt[i]! - p.arrivedAt[i - 1]!).toBeGreaterThanOrEqual(150);
      }
    } finally {
      await client.dispose();
    }
  });

  test('failed nodes are in the final status; a complete session gives one snapshot and ends', async () => {
    const { c, api } = await start({ nodes: 3, initial: { power: 'off' } }, { default_retry_policy: 1 });
    const [dead] = c.world.ids();
    c.world.faults.setNodes('neverPowersOn', [dead!]);
    await c.template('t');
    await c.session('b1', { template: 't', operation: 'boot' });
    const client = wsClient(api.wsUrl, creds);
    try {
      const p = collect(client, PROGRESS, { n: 'b1' });
      await p.until(() => p.completed, 'stream completes', 45_000);
      const last = p.items.at(-1);
      expect(last).toMatchObject({ status: 'COMPLETE', percentFailed: 33.33 });
      expect(last.failureReasons).toEqual([{ key: 'power_on_timeout', count: 1, ids: [dead] }]);

      const again = collect(client, PROGRESS, { n: 'b1' });
      await again.until(() => again.completed, 'ends at once');
      expect(again.items).toEqual([last]);

      const missing = collect(client, PROGRESS, { n: 'nope' });
      await missing.until(() => missing.errors.length > 0, 'refused');
      expect(missing.errors[0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
    } finally {
      await client.dispose();
    }
  });
});
