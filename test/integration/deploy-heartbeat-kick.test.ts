/**
 * A deploy heartbeat that ends the deploy (written, failed, or a WRITTEN whose checksum is not the
 * image's) frees its slot in the deploy budget, so it wakes power-on in the same transaction, for a
 * node waiting for a slot; a step within the deploy wakes only status. On a real database, with a
 * scheduler that records what it is asked to run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { setDeploys } from '../../src/db/deploys.ts';
import { deployHeartbeat } from '../../src/engine/deploy-heartbeat.ts';
import { noScheduler, type Scheduler } from '../../src/engine/scheduler.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';

const SUM = `sha256:${'a'.repeat(64)}`;
const SPEC: DeployRecord = { image: { url: 'http://images/disk.img', format: 'raw', checksum: SUM } };
let t: TestDb;

beforeAll(async () => {
  t = await freshDb();
});
afterAll(async () => {
  await t?.drop();
});

/** A node of session s1 whose deploy is in `state`; the kicks its heartbeat asks for. */
async function heartbeat(i: number, from: string, hb: { state: 'downloading' | 'written' | 'failed'; checksum?: string }) {
  const id = `x3000c0s${i}b0n0`;
  await t.pool.query(`insert into components (id, enabled, session) values ($1, true, 's1')`, [id]);
  await setDeploys(t.db, { name: 's1', tenantKey: '' }, [{ id, deploy: SPEC }]);
  await t.pool.query(`update component_deploys set state = $2 where id = $1`, [id, from]);
  const kicks: string[][] = [];
  const scheduler: Scheduler = { ...noScheduler, kick: async (_db, ops) => void kicks.push([...ops]) };
  const r = await deployHeartbeat(
    t.db,
    scheduler,
    { id, ...hb, ...(hb.state === 'failed' ? { reason: 'write_error' } : {}), actor: `node:${id}`, sender: 'agent' },
    { heartbeatTimeoutSeconds: 300 },
  );
  // A WRITTEN with another checksum is refused (and fails the deploy); every other heartbeat here is taken.
  expect(r.ok, JSON.stringify(r)).toBe(hb.state !== 'written' || hb.checksum === SUM);
  return kicks;
}

describe('a deploy heartbeat wakes', () => {
  it('power-on when the image is written (its slot is free)', async () => {
    expect(await heartbeat(1, 'writing', { state: 'written', checksum: SUM })).toEqual([['status', 'power-on']]);
  });
  it('power-on when the deploy fails, by the agent or by a checksum that is not the image’s', async () => {
    expect(await heartbeat(2, 'downloading', { state: 'failed' })).toEqual([['status', 'power-on']]);
    expect(await heartbeat(3, 'writing', { state: 'written', checksum: `sha256:${'b'.repeat(64)}` })).toEqual([['status', 'power-on']]);
  });
  it('only status for a step within the deploy (the slot is still held)', async () => {
    expect(await heartbeat(4, 'starting', { state: 'downloading' })).toEqual([['status']]);
  });
});
