/**
 * Session setup's write: desired (or staged) state for every node a session manages, in one
 * statement however many nodes, with one event each.
 */
import { sql, type AnyColumn } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, type SessionRow } from '../schema.ts';
import { appendEvents, type NewEvent } from '../events.ts';
import { arrayParam, unnestAs } from '../sql.ts';
import type { DesiredState } from '../../domain/sessions.ts';

export interface SetupRow {
  id: string;
  desired: DesiredState;
  /** FIFO position in a gated rollout, else null. */
  queuedSeq: number | null;
}

/**
 * Non-staged: the node joins the session, is enabled and put on hold (or queued behind a rollout
 * gate), its counters reset and its last action `session_setup` (unless a shutdown meets a power-on still in
 * flight, which stays the last action); a reboot forgets the node's actual
 * state. A rescue writes the rescue image and an unrescue clears it, both leaving the desired state
 * as it is and forgetting the actual state, as a reboot does (docs/rescue.md). Staged: only the
 * staged state is written.
 */
export async function applySetup(
  db: Db,
  s: Pick<SessionRow, 'tenantKey' | 'name' | 'operation' | 'stage'>,
  rows: SetupRow[],
  opts: { retryPolicy: number | null; maxPowerOnWaitTime: number },
  actor: string,
): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: SetupRow) => T) => rows.map(f);
  const u = unnestAs('u', {
    id: arrayParam(
      col((r) => r.id),
      'text',
    ),
    k: arrayParam(
      col((r) => r.desired.kernel),
      'text',
    ),
    p: arrayParam(
      col((r) => r.desired.kernelParameters),
      'text',
    ),
    i: arrayParam(
      col((r) => r.desired.initrd),
      'text',
    ),
    cfg: arrayParam(
      col((r) => r.desired.configuration),
      'text',
    ),
    seq: arrayParam(
      col((r) => r.queuedSeq),
      'bigint',
    ),
  });
  const c = components;
  if (s.stage) {
    await db
      .update(c)
      .set({
        stagedKernel: sql`u.k`,
        stagedKernelParameters: sql`u.p`,
        stagedInitrd: sql`u.i`,
        stagedConfiguration: sql`u.cfg`,
        stagedSession: s.name,
        stagedUpdatedAt: sql`now()`,
        error: '',
        updatedAt: sql`now()`,
      })
      .from(u)
      .where(sql`${c.id} = u.id`);
  } else {
    const rescue = s.operation === 'rescue' || s.operation === 'unrescue';
    const reboot = s.operation === 'reboot' || rescue;
    // Only a shutdown has an empty kernel to boot (an unrescue writes none, but boots the desired state).
    const inFlightPowerOn = rescue
      ? sql`false`
      : sql`(u.k = '' and ${c.lastAction} = 'powering_on' and not ${c.lastActionFailed}
      and ${c.lastActionAt} > now() - make_interval(secs => ${opts.maxPowerOnWaitTime}))`;
    const forget = (column: AnyColumn) => (reboot ? '' : sql`${column}`);
    // What the session boots: the rescue image's columns for a rescue and an unrescue, else the desired state's.
    const target = rescue
      ? { rescueKernel: sql`u.k`, rescueKernelParameters: sql`u.p`, rescueInitrd: sql`u.i` }
      : {
          desiredKernel: sql`u.k`,
          desiredKernelParameters: sql`u.p`,
          desiredInitrd: sql`u.i`,
          desiredConfiguration: sql`u.cfg`,
          desiredUpdatedAt: sql`now()`,
        };
    await db
      .update(c)
      .set({
        ...target,
        desiredBssToken: '',
        session: s.name,
        sessionTenant: s.tenantKey,
        enabled: true,
        statusOverride: sql`case when u.seq is null then 'on_hold' else 'queued' end`,
        queuedSeq: sql`u.seq`,
        // A shutdown that takes a node with an older session's power-on still on its way keeps that
        // power-on as the last action, so the status rule 1p waits for it to land instead of calling
        // the node shut down while it is about to come on.
        lastAction: sql`case when ${inFlightPowerOn} then ${c.lastAction} else 'session_setup' end`,
        lastActionFailed: false,
        lastActionAt: sql`case when ${inFlightPowerOn} then ${c.lastActionAt} else now() end`,
        error: '',
        failureReason: '',
        // A new session: an old run of unknown power reads (status rows U1, U2) no longer counts.
        powerUnknownSince: null,
        powerOnAttempts: 0,
        powerOffGracefulAttempts: 0,
        powerOffForcefulAttempts: 0,
        retryPolicy: opts.retryPolicy === null ? sql`${c.retryPolicy}` : opts.retryPolicy,
        actualKernel: forget(c.actualKernel),
        actualKernelParameters: forget(c.actualKernelParameters),
        actualInitrd: forget(c.actualInitrd),
        actualBssToken: forget(c.actualBssToken),
        updatedAt: sql`now()`,
      })
      .from(u)
      .where(sql`${c.id} = u.id`);
  }
  await appendEvents(
    db,
    rows.map(
      (r): NewEvent => ({
        componentId: r.id,
        session: s.name,
        sessionTenant: s.tenantKey,
        kind: s.stage ? 'stage' : 'setup',
        actor,
        action: s.stage ? null : 'session_setup',
        toStatus: s.stage ? null : r.queuedSeq === null ? 'on_hold' : 'queued',
        data: { operation: s.operation, kernel: r.desired.kernel, configuration: r.desired.configuration },
      }),
    ),
  );
}
