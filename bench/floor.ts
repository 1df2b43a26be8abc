/**
 * The floor: the least database work a reboot of N nodes needs, with no application logic. The same
 * rows bootorch writes (the component updates of each transition and action, one event per change,
 * the token record, the session rows), each step as one set-based statement over every node.
 */
import type { Connection } from '../src/db/client.ts';

const EVENT = `insert into component_events (component_id, session, kind, actor, from_phase, to_phase)
  select id, 'floor', $1, 'floor', '', '' from components`;

export async function runFloor(conn: Connection, nodes: number): Promise<{ wallMs: number; rowsWritten: number }> {
  const q = (text: string, values: unknown[] = []) => conn.pool.query(text, values);
  await q(`insert into components (id) select 'x' || (1000 + g / 256) || 'c0s' || (g % 256) || 'b0n0' from generate_series(0, $1 - 1) g`, [
    nodes,
  ]);
  await q(`insert into session_templates (name, boot_sets) values ('t', '{}')`);
  let rows = 0;
  const step = async (update: string, kind: string) => {
    const c = await conn.pool.connect();
    try {
      await c.query('begin');
      rows += (await c.query(update)).rowCount ?? 0;
      rows += (await c.query(EVENT, [kind])).rowCount ?? 0;
      await c.query('commit');
    } finally {
      c.release();
    }
  };
  const t0 = performance.now();
  rows += (await q(`insert into sessions (name, operation, template_name) values ('floor', 'reboot', 't')`)).rowCount ?? 0;
  await step(
    `update components set desired_kernel = 'k', desired_kernel_parameters = 'p', desired_initrd = 'i',
    desired_configuration = 'c', session = 'floor', enabled = true, status_override = 'on_hold', last_action = 'session_setup',
    last_action_at = now(), actual_kernel = '', updated_at = now()`,
    'setup',
  );
  rows += (await q(`update sessions set status = 'running' where name = 'floor'`)).rowCount ?? 0;
  await step(`update components set phase = 'powering_off', status_override = '', updated_at = now()`, 'transition');
  await step(
    `update components set last_action = 'powering_off_gracefully', last_action_at = now(),
    power_off_graceful_attempts = power_off_graceful_attempts + 1, updated_at = now()`,
    'action',
  );
  await step(`update components set phase = 'powering_on', actual_kernel = '', updated_at = now()`, 'transition');
  rows += (await q(`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ('tok', 'k', 'p', 'i')`)).rowCount ?? 0;
  await step(
    `update components set last_action = 'powering_on', last_action_at = now(), power_on_attempts = power_on_attempts + 1,
    desired_bss_token = 'tok', updated_at = now()`,
    'action',
  );
  await step(
    `update components set actual_kernel = 'k', actual_kernel_parameters = 'p', actual_initrd = 'i',
    actual_bss_token = 'tok', actual_updated_at = now(), updated_at = now()`,
    'report',
  );
  await step(
    `update components set phase = '', enabled = false, power_on_attempts = 0, power_off_graceful_attempts = 0,
    updated_at = now()`,
    'transition',
  );
  rows += (await q(`update sessions set status = 'complete', end_time = now() where name = 'floor'`)).rowCount ?? 0;
  rows += (await q(`insert into session_status_snapshots (name, data) values ('floor', '{}')`)).rowCount ?? 0;
  return { wallMs: performance.now() - t0, rowsWritten: rows };
}
