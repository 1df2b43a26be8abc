/**
 * The names the engine gives pg-boss: its queues and the NOTIFY channel that wakes the workers.
 * Every queue of the engine starts with ENGINE_QUEUES (`bootorch-`), so the lease reaper can find
 * their active jobs: an operator's tick queue (`bootorch-op-<operator>`), the timer queue, and an
 * operator's job queue (`bootorch-act-<operator>`: its action jobs and delayed decisions).
 */
import type { JobOperatorName, OperatorName } from '../scheduler.ts';

export const ENGINE_QUEUES = 'bootorch-';
export const TICK_QUEUE_PREFIX = 'bootorch-op-';
export const ACTION_QUEUE_PREFIX = 'bootorch-act-';
export const TIMER_QUEUE = 'bootorch-timer';
/** Every worker process LISTENs here: the payload names tick or job queues with new work. */
export const KICK_CHANNEL = 'bootorch_kick';

/** An operator's tick queue. */
export const queueOf = (op: OperatorName) => `${TICK_QUEUE_PREFIX}${op}`;
/** An operator's job queue (action jobs and due jobs). */
export const actionQueueOf = (op: JobOperatorName) => `${ACTION_QUEUE_PREFIX}${op}`;
