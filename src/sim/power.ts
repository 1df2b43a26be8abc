/**
 * PCS as the world sees it (csm-services §2): a transition is answered at once with an id, the work
 * happens in the background after the configured delays, and each node gets a task that ends
 * `succeeded` or `failed`. A newer transition on a node supersedes its pending one (the older task
 * fails "superseded"), so an escalation from Soft-Off to Force-Off does what operators expect.
 */
import type { Faults } from './faults.ts';
import type { Timers } from './timers.ts';
import type { PowerValue, SimNode } from './types.ts';

export const PCS_OPERATIONS = ['On', 'Off', 'Soft-Off', 'Soft-Restart', 'Hard-Restart', 'Init', 'Force-Off'] as const;
export type PcsOperation = (typeof PCS_OPERATIONS)[number];

/** Canonical operation for PCS's case-insensitive input; undefined when PCS would answer 400. */
export function canonicalOperation(op: string): PcsOperation | undefined {
  return PCS_OPERATIONS.find((o) => o.toLowerCase() === op.toLowerCase());
}

export interface PowerTiming {
  /** PCS reports power from its own periodic BMC poll: a change shows up this long after it happened (default 0). */
  powerStatusLagMs: number;
  powerOnDelayMs: number;
  /** Soft-Off (and Off) take this long on a node that obeys. */
  powerOffDelayMs: number;
  forceOffDelayMs: number;
}

export interface PcsTask {
  xname: string;
  taskStatus: 'new' | 'in-progress' | 'failed' | 'succeeded' | 'unsupported';
  taskStatusDescription: string;
  error?: string;
}

export interface PcsTransition {
  transitionID: string;
  operation: PcsOperation;
  createTime: string;
  automaticExpirationTime: string;
  transitionStatus: 'new' | 'in-progress' | 'completed';
  tasks: PcsTask[];
}

export interface PowerHost {
  timers: Timers;
  faults: Faults;
  timing: PowerTiming;
  node(id: string): SimNode | undefined;
  newId(): string;
  /** Apply a power change to the node (events, boot, HSM state). */
  setPower(node: SimNode, value: PowerValue, op: PcsOperation): void;
  countTransition(op: PcsOperation, id: string): void;
  onFailed(id: string, op: PcsOperation, error: string): void;
}

const KEEP = 2000;

export class PowerControl {
  readonly transitions = new Map<string, PcsTransition>();
  private readonly pending = new Map<string, { cancel: () => void; task: PcsTask; t: PcsTransition }>();
  private readonly onCount = new Map<string, number>();

  constructor(private readonly host: PowerHost) {}

  /** POST /transitions: returns the record at once; tasks finish later. */
  start(operation: PcsOperation, xnames: string[]): PcsTransition {
    const now = new Date();
    const t: PcsTransition = {
      transitionID: this.host.newId(),
      operation,
      createTime: now.toISOString(),
      automaticExpirationTime: new Date(now.getTime() + 86_400_000).toISOString(),
      transitionStatus: xnames.length ? 'in-progress' : 'completed',
      tasks: [],
    };
    this.transitions.set(t.transitionID, t);
    this.trim();
    for (const xname of new Set(xnames)) {
      const task: PcsTask = { xname, taskStatus: 'in-progress', taskStatusDescription: 'Transition in progress' };
      t.tasks.push(task);
      const node = this.host.node(xname);
      if (!node) {
        this.end(t, task, 'failed', 'Failed to achieve transition', 'Component not found in component map.');
        continue;
      }
      this.host.countTransition(operation, xname);
      this.run(t, task, node);
    }
    return t;
  }

  private run(t: PcsTransition, task: PcsTask, node: SimNode): void {
    const prev = this.pending.get(node.id);
    if (prev) {
      prev.cancel();
      this.pending.delete(node.id);
      this.end(prev.t, prev.task, 'failed', 'Failed to achieve transition', 'Transition superseded by a newer one.');
    }
    const { timing, faults } = this.host;
    const op = t.operation;
    const target: PowerValue = op === 'On' ? 'on' : 'off';
    const restart = op === 'Soft-Restart' || op === 'Hard-Restart' || op === 'Init';
    if (!restart && node.power === target) {
      this.end(t, task, 'succeeded', 'Component already in desired state');
      return;
    }
    if (op === 'Soft-Restart' && node.power !== 'on') {
      this.end(t, task, 'failed', 'Failed to achieve transition', 'Component must be On for Soft-Restart');
      return;
    }
    const schedule = (ms: number, fn: () => void) => {
      const cancel = this.host.timers.after(ms, () => {
        this.pending.delete(node.id);
        fn();
      });
      this.pending.set(node.id, { cancel, task, t });
    };
    const powerOn = () => {
      const n = (this.onCount.get(node.id) ?? 0) + 1;
      this.onCount.set(node.id, n);
      schedule(timing.powerOnDelayMs, () => {
        if (faults.has('neverPowersOn', node.id)) return this.fail(t, task, 'on');
        this.host.setPower(node, 'on', op);
        this.end(t, task, 'succeeded', 'Transition confirmed, on');
      });
    };
    switch (op) {
      case 'On':
        return powerOn();
      case 'Force-Off':
        return schedule(timing.forceOffDelayMs, () => {
          if (faults.has('neverPowersOff', node.id)) return this.fail(t, task, 'force-off');
          this.off(t, task, node);
        });
      case 'Soft-Off':
        return schedule(timing.powerOffDelayMs, () => {
          if (faults.has('ignoresSoftOff', node.id) || faults.has('neverPowersOff', node.id)) return this.fail(t, task, 'soft-off');
          this.off(t, task, node);
        });
      case 'Off':
        // Graceful first; PCS forces it off after the deadline if the OS ignores the request.
        return schedule(timing.powerOffDelayMs, () => {
          if (!faults.has('ignoresSoftOff', node.id)) return this.off(t, task, node);
          schedule(timing.forceOffDelayMs, () => this.off(t, task, node));
        });
      default: {
        const offMs = op === 'Soft-Restart' ? timing.powerOffDelayMs : timing.forceOffDelayMs;
        return schedule(offMs, () => {
          if (op === 'Soft-Restart' && faults.has('ignoresSoftOff', node.id)) return this.fail(t, task, 'soft-restart');
          if (node.power === 'on') this.host.setPower(node, 'off', op);
          powerOn();
        });
      }
    }
  }

  private off(t: PcsTransition, task: PcsTask, node: SimNode): void {
    if (node.power !== 'off') this.host.setPower(node, 'off', t.operation);
    this.end(t, task, 'succeeded', 'Transition confirmed, off');
  }

  private fail(t: PcsTransition, task: PcsTask, what: string): void {
    this.end(t, task, 'failed', 'Failed to achieve transition', `Timeout waiting for transition, ${what}.`);
  }

  private end(t: PcsTransition, task: PcsTask, status: 'succeeded' | 'failed', desc: string, error?: string): void {
    task.taskStatus = status;
    task.taskStatusDescription = desc;
    if (error) {
      task.error = error;
      this.host.onFailed(task.xname, t.operation, error);
    }
    if (t.tasks.every((k) => k.taskStatus === 'succeeded' || k.taskStatus === 'failed')) t.transitionStatus = 'completed';
  }

  /** How many times this node was asked to power on (rate faults draw per attempt). */
  powerOnAttempts(id: string): number {
    return this.onCount.get(id) ?? 0;
  }

  private trim(): void {
    for (const [id, t] of this.transitions) {
      if (this.transitions.size <= KEEP) break;
      if (t.transitionStatus === 'completed') this.transitions.delete(id);
    }
  }
}

export const SUPPORTED_TRANSITIONS = ['On', 'Off', 'Soft-Restart', 'Hard-Restart', 'Init', 'Force-Off', 'Soft-Off'];
