/**
 * What the killed-worker fault test checks of each reboot it disturbed, from the database and the
 * simulator's counters taken at the reboot's start and end:
 * - no node got more power actions of any kind than the retry policy allows, nor more than bootorch
 *   recorded before acting (an `action` event, with its attempt number, is written before the call
 *   to PCS); each node at least one power-off and one power-on;
 * - the event log is complete: each node's state changes form one unbroken chain from setup to
 *   stable, with the node's own report among them.
 */
import type pg from 'pg';
import { expect } from 'vitest';
import { FAULT_OPTIONS } from './stack.ts';

/** The simulator's /sim/counters, the parts read here. */
export interface SimCounters {
  transitions: Record<string, Record<string, number>>;
  reports: { delivered: number; refused: number };
}

/** Power transitions of `op` the simulator counted for node `id` between two readings of /sim/counters. */
export const transitionsBetween = (before: SimCounters, after: SimCounters) => (op: string, id: string) =>
  (after.transitions[op]?.[id] ?? 0) - (before.transitions[op]?.[id] ?? 0);

/** Check reboot `session` of the nodes `ids`; returns the power actions the hardware saw, those beyond one off and one on, and the events. */
export async function checkReboot(
  pool: pg.Pool,
  session: string,
  ids: string[],
  before: SimCounters,
  after: SimCounters,
): Promise<{ actions: number; extra: number; events: number }> {
  const events = (await pool.query(`select * from component_events where session = $1 order by id`, [session])).rows;
  const recorded = new Map<string, number>();
  for (const e of events.filter((x) => x.kind === 'action')) {
    recorded.set(`${e.component_id} ${e.action}`, (recorded.get(`${e.component_id} ${e.action}`) ?? 0) + 1);
    if (e.data?.attempt !== undefined)
      expect(e.data.attempt, `${session}: ${e.component_id} ${e.action} attempt`).toBeLessThanOrEqual(FAULT_OPTIONS.default_retry_policy);
  }
  const actionsOf = (id: string, action: string) => recorded.get(`${id} ${action}`) ?? 0;
  const delta = transitionsBetween(before, after);
  const ops = Object.keys(after.transitions);
  let actions = 0;
  let extra = 0;
  for (const id of ids) {
    const on = delta('On', id);
    const soft = delta('Soft-Off', id);
    const hard = delta('Force-Off', id);
    for (const op of ops) actions += delta(op, id);
    extra += Math.max(0, on - 1) + Math.max(0, soft + hard - 1);
    expect(on, `${session}: On ${id}`).toBeGreaterThanOrEqual(1);
    expect(on, `${session}: On ${id}`).toBeLessThanOrEqual(FAULT_OPTIONS.default_retry_policy);
    expect(on, `${session}: On ${id} vs recorded actions`).toBeLessThanOrEqual(actionsOf(id, 'powering_on'));
    expect(soft + hard, `${session}: power-offs ${id}`).toBeGreaterThanOrEqual(1);
    expect(soft, `${session}: Soft-Off ${id}`).toBeLessThanOrEqual(
      Math.min(FAULT_OPTIONS.default_retry_policy, actionsOf(id, 'powering_off_gracefully')),
    );
    expect(hard, `${session}: Force-Off ${id}`).toBeLessThanOrEqual(
      Math.min(FAULT_OPTIONS.default_retry_policy, actionsOf(id, 'powering_off_forcefully')),
    );
    for (const op of ops.filter((o) => !['On', 'Soft-Off', 'Force-Off'].includes(o)))
      expect(delta(op, id), `${session}: ${op} ${id}`).toBe(0);
  }

  const byNode = new Map<string, (typeof events)[number][]>();
  for (const e of events) byNode.set(e.component_id, [...(byNode.get(e.component_id) ?? []), e]);
  expect(byNode.size, `${session}: nodes with events`).toBe(ids.length);
  for (const id of ids) {
    const evs = byNode.get(id)!;
    expect(evs[0], `${session}: ${id}`).toMatchObject({ kind: 'setup' });
    expect(
      evs.some((e) => e.kind === 'report' && e.actor === `node:${id}`),
      `${session}: ${id} reported`,
    ).toBe(true);
    const changes = evs.filter((e) => e.to_status !== null);
    for (let i = 1; i < changes.length; i++) {
      const [prev, next] = [changes[i - 1], changes[i]];
      if (next.from_status !== null)
        expect(`${next.from_status}`, `${session}: ${id} event ${next.id} follows ${prev.id}`).toBe(`${prev.to_status}`);
    }
    expect(changes.at(-1), `${session}: ${id}`).toMatchObject({ to_status: 'stable' });
  }
  return { actions, extra, events: events.length };
}
