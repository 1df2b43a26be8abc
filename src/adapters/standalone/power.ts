/**
 * PowerPort over the nodes' own BMCs, with PCS's semantics (csm-services §2): a transition is
 * answered at once with an id while the BMC calls run in the background; its tasks end succeeded or
 * failed with the classified error (GET transitions/{id}). Every BMC call goes through the guard
 * (bmc-guard.ts): one call at a time per BMC, a bounded number at once, a circuit per BMC, backoff on
 * 429/503. power-status asks every BMC; a BMC that does not answer gives that node an error entry
 * instead of failing the whole call, as PCS does: its power is unknown, with the cause (bmc.ts
 * powerUnknown), as is a node bootorch has no BMC for (not_in_inventory).
 *
 * A slow BMC does not hold up the others' pass. power-status waits only for reads younger than
 * `passWaitMs`, to nodes whose last read answered within it; at most `passWaitMs`; and once all
 * but 5 % of them have answered, the stragglers get as long again as those took (at least 100 ms).
 * A node it did not wait for is unknown in this pass, "still asking" (pending); its read goes on, and
 * the next power-status joins it or takes its answer. So a dead or slow BMC costs the first pass that
 * meets it a short wait at most, and no pass after it.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { nodeBmcs, type NodeBmc } from '../../db/node-inventory.ts';
import type { BootFromDiskProblem, PowerOperation, PowerPort, PowerState, TransitionStatus } from '../ports.ts';
import { ServiceError } from '../errors.ts';
import { bmcCause, powerUnknown, type BmcDriver, type BmcTarget } from './bmc.ts';
import { BmcGuard } from './bmc-guard.ts';
import { open } from './secrets.ts';

export interface StandalonePowerOptions {
  drivers: { ipmi: BmcDriver; redfish: BmcDriver };
  /** Opens sealed BMC passwords; without a key, nodes with a stored secret cannot be reached. */
  secretKey?: Buffer;
  /** Limits and circuits of the BMC calls (default: a guard with its defaults, for this adapter alone). */
  guard?: BmcGuard;
  /** How long power-status waits for the BMCs before answering for those still in flight, ms (default 2000). */
  passWaitMs?: number;
  /** Finished transitions kept for getTransition (default 1000). */
  keepTransitions?: number;
  /**
   * Called with every failed task (the worker logs them), when its BMC call settles: after the action
   * batch that asked for it has ended. It names the node; a transition (PCS's API) knows no session.
   */
  onTaskFailed?: (xname: string, operation: PowerOperation, error: string) => void;
}

export class StandalonePower implements PowerPort {
  private readonly guard: BmcGuard;
  /** Power reads in flight, by node: a power-status joins its node's read rather than start another. */
  private readonly reads = new Map<string, Read>();
  /** Nodes whose last read took longer than the pass's wait: passes do not wait for them. */
  private readonly slow = new Set<string>();
  private readonly transitions = new Map<string, TransitionStatus>();
  /** Background work of unfinished transitions (tests and shutdown wait on it). */
  private readonly running = new Set<Promise<void>>();
  /**
   * Nodes with a power action (a transition's, or a disk boot's) not yet settled at their BMC, and how
   * many: a power-status does not read them. The read would only queue behind the action at the same
   * BMC and answer what the node was before it; their state is read once the action has settled.
   */
  private readonly acting = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly o: StandalonePowerOptions,
  ) {
    this.guard = o.guard ?? new BmcGuard();
  }

  async powerStatus(ids: string[]): Promise<Map<string, PowerState>> {
    const out = new Map<string, PowerState>();
    const rows = await nodeBmcs(this.db, [...new Set(ids)]);
    const wait = this.o.passWaitMs ?? 2000;
    const reads = rows.map((r) => (r.bmcDriver === 'none' || this.acting.has(r.id) ? undefined : this.read(r)));
    const now = Date.now();
    await untilAnswered(
      reads.flatMap((r) => (r && !this.slow.has(r.id) && now - r.started < wait ? [r.done] : [])),
      wait,
    );
    // Reads that fail at once (an open circuit) are answered in this pass too.
    await new Promise((resolve) => setImmediate(resolve));
    // A read this pass stopped waiting for is handed, when it settles, to the next power-status (read()).
    for (const read of reads) {
      if (read && !read.result) read.late = true;
      // An answer this pass used is not handed to the next one as well.
      else if (read && this.reads.get(read.id) === read) this.reads.delete(read.id);
    }
    rows.forEach((r, i) => {
      const res = reads[i]?.result;
      // A read that failed (or has not answered yet) is unknown with its cause, never a state.
      if (r.bmcDriver === 'none') out.set(r.id, { state: 'unknown', cause: 'not_in_inventory', error: NO_BMC });
      else if (!reads[i]) out.set(r.id, { state: 'unknown', cause: 'bmc_timeout', error: stillActing(r), pending: true });
      else if (!res)
        out.set(r.id, { state: 'unknown', cause: 'bmc_timeout', error: stillAsking(r, this.o.passWaitMs ?? 2000), pending: true });
      else if (res.status === 'fulfilled') out.set(r.id, { state: res.value, error: '' });
      else out.set(r.id, powerUnknown(res.reason));
    });
    return out;
  }

  stillReading(ids: string[]): Set<string> {
    const out = new Set<string>();
    for (const id of ids) {
      const read = this.reads.get(id);
      if (this.acting.has(id) || (read && !read.result)) out.add(id);
    }
    return out;
  }

  async transition(operation: PowerOperation, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await nodeBmcs(this.db, [...new Set(ids)]);
    const known = new Set(rows.map((r) => r.id));
    const id = randomUUID();
    const t: TransitionStatus = {
      id,
      operation,
      status: 'in-progress',
      tasks: ids.map((xname) => ({
        xname,
        status: known.has(xname) ? 'in-progress' : 'failed',
        error: known.has(xname) ? '' : 'not in the inventory',
      })),
    };
    this.remember(t);
    const work = Promise.allSettled(rows.map((r) => this.act(r, (d, target) => d.power(target, operation)))).then((results) => {
      rows.forEach((r, i) => {
        const res = results[i]!;
        const task = t.tasks.find((k) => k.xname === r.id)!;
        task.status = res.status === 'fulfilled' ? 'succeeded' : 'failed';
        if (res.status === 'rejected') {
          task.error = errorText(res.reason);
          this.o.onTaskFailed?.(r.id, operation, task.error);
        }
      });
      t.status = 'completed';
    });
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
    return [id];
  }

  /** Disk deploys: every node's BMC at once (bounded by the guard); the failures returned. */
  async bootFromDisk(ids: string[]): Promise<BootFromDiskProblem[]> {
    const rows = await nodeBmcs(this.db, [...new Set(ids)]);
    const known = new Set(rows.map((r) => r.id));
    const results = await Promise.allSettled(rows.map((r) => this.act(r, (d, t) => d.bootFromDisk(t))));
    const problems: BootFromDiskProblem[] = ids
      .filter((id) => !known.has(id))
      .map((id) => ({ id, error: 'not in the inventory', transient: false }));
    rows.forEach((r, i) => {
      const res = results[i]!;
      if (res.status === 'rejected')
        problems.push({
          id: r.id,
          error: errorText(res.reason),
          transient: res.reason instanceof ServiceError && res.reason.transient,
          cause: bmcCause(res.reason),
        });
    });
    return problems;
  }

  async getTransition(id: string): Promise<TransitionStatus | undefined> {
    const t = this.transitions.get(id);
    return t && structuredClone(t);
  }

  /** Resolves when every transition started so far has finished (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }

  private remember(t: TransitionStatus) {
    this.transitions.set(t.id, t);
    const keep = this.o.keepTransitions ?? 1000;
    for (const k of this.transitions.keys()) {
      if (this.transitions.size <= keep) break;
      this.transitions.delete(k);
    }
  }

  /**
   * The node's power read in flight, or one a pass stopped waiting for that has settled since (used
   * once: a slow BMC's answer is not thrown away, or a BMC slower than the pass's wait would never
   * be read), or a new one.
   */
  private read(r: NodeBmc): Read {
    const prior = this.reads.get(r.id);
    if (prior) {
      if (prior.result) this.reads.delete(r.id);
      return prior;
    }
    const started = Date.now();
    const settled = () => {
      if (Date.now() - started > (this.o.passWaitMs ?? 2000)) this.slow.add(r.id);
      else this.slow.delete(r.id);
    };
    const read: Read = {
      id: r.id,
      started,
      done: this.withBmc(r, (d, t) => d.powerState(t)).then(
        (value) => {
          settled();
          read.result = { status: 'fulfilled', value };
        },
        (reason: unknown) => {
          settled();
          read.result = { status: 'rejected', reason };
        },
      ),
    };
    this.reads.set(r.id, read);
    void read.done.finally(() => {
      if (!read.late && this.reads.get(r.id) === read) this.reads.delete(r.id);
    });
    return read;
  }

  /** A power action at the node's BMC, ahead of waiting reads: the node is not read until it has settled. */
  private async act<T>(r: NodeBmc, fn: (d: BmcDriver, t: BmcTarget) => Promise<T>): Promise<T> {
    // A read asked before the action answers what the node was before it: not handed to a later pass
    // (which would take a node just powered on for one still off). The next pass reads it afresh.
    this.reads.delete(r.id);
    this.acting.set(r.id, (this.acting.get(r.id) ?? 0) + 1);
    try {
      return await this.withBmc(r, fn, true);
    } finally {
      const n = this.acting.get(r.id)! - 1;
      if (n) this.acting.set(r.id, n);
      else this.acting.delete(r.id);
    }
  }

  /** `fn` at the node's BMC through the guard; `first`: ahead of the calls waiting for a global turn (actions). */
  private async withBmc<T>(r: NodeBmc, fn: (d: BmcDriver, t: BmcTarget) => Promise<T>, first = false): Promise<T> {
    if (r.bmcDriver === 'none') throw new Error(`${r.id} has no BMC in the inventory`);
    let password = '';
    if (r.bmcSecret) {
      if (!this.o.secretKey) throw new Error(`${r.id}: BOOTORCH_SECRET_KEY is not set, so its BMC password cannot be read`);
      password = open(this.o.secretKey, r.id, r.bmcSecret);
    }
    const target = { id: r.id, address: r.bmcAddress, username: r.bmcUsername, password };
    const driver = r.bmcDriver === 'ipmi' ? this.o.drivers.ipmi : this.o.drivers.redfish;
    return this.guard.run(target, () => fn(driver, target), { first });
  }
}

/** A power read in flight; `result` is set when it settles. */
interface Read {
  id: string;
  /** When it was asked (ms). */
  started: number;
  done: Promise<void>;
  result?: PromiseSettledResult<'on' | 'off'>;
  /** A pass stopped waiting for it: its result is kept for the next power-status. */
  late?: boolean;
}

/**
 * Resolves when every read has settled, after `ms`, or when the stragglers are late: once all but 5 %
 * have answered, the rest get as long again as those took (at least 100 ms). Reads never reject.
 */
function untilAnswered(reads: Promise<void>[], ms: number): Promise<void> {
  if (reads.length === 0) return Promise.resolve();
  const t0 = Date.now();
  const stragglers = Math.floor(reads.length * 0.05);
  return new Promise((resolve) => {
    let left = reads.length;
    let late: NodeJS.Timeout | undefined;
    const deadline = setTimeout(finish, ms);
    function finish() {
      clearTimeout(deadline);
      clearTimeout(late);
      resolve();
    }
    for (const r of reads) {
      void r.then(() => {
        left--;
        if (left === 0) finish();
        else if (left <= stragglers && !late) late = setTimeout(finish, Math.max(100, Date.now() - t0));
      });
    }
  });
}

const NO_BMC = 'no BMC registered for this node (driver none): its power cannot be read';

/** The error entry of a node whose BMC has not answered within the pass's wait: its read goes on. */
function stillAsking(r: NodeBmc, ms: number): string {
  return `timeout: ${r.id} (BMC ${r.bmcAddress}): still asking (slow BMC): no answer within ${ms / 1000} s; the read goes on, and the next power-status waits on it rather than asking again`;
}

/** The error entry of a node not read because a power action is still at its BMC. */
function stillActing(r: NodeBmc): string {
  return `timeout: ${r.id} (BMC ${r.bmcAddress}): a power action is still at its BMC (queued or in flight); its power is read once that has settled`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
