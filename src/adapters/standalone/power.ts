/**
 * PowerPort over the nodes' own BMCs, with PCS's semantics (csm-services §2): a transition is
 * answered at once with an id while the BMC calls run in the background, one node at a time per
 * node (a per-node lock) and a bounded number at once; its tasks end succeeded or failed with the
 * classified error (GET transitions/{id}). power-status asks every BMC; a BMC that does not answer
 * gives that node an error entry instead of failing the whole call, as PCS does; a node bootorch
 * has no BMC for gets powerState `undefined`.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { listNodes, type NodeInventoryRow } from '../../db/node-inventory.ts';
import type { BootFromDiskProblem, PowerOperation, PowerPort, PowerState, TransitionStatus } from '../ports.ts';
import { ServiceError } from '../errors.ts';
import { KeyedLock, type BmcDriver, type BmcTarget } from './bmc.ts';
import { settleAll } from '../../domain/lists.ts';
import { open } from './secrets.ts';

export interface StandalonePowerOptions {
  drivers: { ipmi: BmcDriver; redfish: BmcDriver };
  /** Opens sealed BMC passwords; without a key, nodes with a stored secret cannot be reached. */
  secretKey?: Buffer;
  /** BMC calls at once (default 16). */
  concurrency?: number;
  /** Finished transitions kept for getTransition (default 1000). */
  keepTransitions?: number;
  /** Called with every failed task (the worker logs them). */
  onTaskFailed?: (xname: string, operation: PowerOperation, error: string) => void;
}

export class StandalonePower implements PowerPort {
  private readonly lock = new KeyedLock();
  private readonly transitions = new Map<string, TransitionStatus>();
  /** Background work of unfinished transitions (tests and shutdown wait on it). */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly o: StandalonePowerOptions,
  ) {}

  async powerStatus(ids: string[]): Promise<Map<string, PowerState>> {
    const out = new Map<string, PowerState>();
    const rows = await listNodes(this.db, [...new Set(ids)]);
    const results = await settleAll(rows, this.o.concurrency ?? 16, (r) => this.withBmc(r, (d, t) => d.powerState(t)));
    rows.forEach((r, i) => {
      const res = results[i]!;
      if (r.bmcDriver === 'none') out.set(r.id, { state: 'undefined', error: '' });
      else if (res.status === 'fulfilled') out.set(r.id, { state: res.value, error: '' });
      else out.set(r.id, { state: '', error: errorText(res.reason) });
    });
    return out;
  }

  async transition(operation: PowerOperation, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await listNodes(this.db, [...new Set(ids)]);
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
    const work = settleAll(rows, this.o.concurrency ?? 16, (r) => this.withBmc(r, (d, target) => d.power(target, operation))).then(
      (results) => {
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
      },
    );
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
    return [id];
  }

  /** Disk deploys: every node's BMC at once (bounded), each under the node's lock; the failures returned. */
  async bootFromDisk(ids: string[]): Promise<BootFromDiskProblem[]> {
    const rows = await listNodes(this.db, [...new Set(ids)]);
    const known = new Set(rows.map((r) => r.id));
    const results = await settleAll(rows, this.o.concurrency ?? 16, (r) => this.withBmc(r, (d, t) => d.bootFromDisk(t)));
    const problems: BootFromDiskProblem[] = ids
      .filter((id) => !known.has(id))
      .map((id) => ({ id, error: 'not in the inventory', transient: false }));
    rows.forEach((r, i) => {
      const res = results[i]!;
      if (res.status === 'rejected')
        problems.push({ id: r.id, error: errorText(res.reason), transient: res.reason instanceof ServiceError && res.reason.transient });
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

  private withBmc<T>(r: NodeInventoryRow, fn: (d: BmcDriver, t: BmcTarget) => Promise<T>): Promise<T> {
    return this.lock.run(r.id, async () => {
      if (r.bmcDriver === 'none') throw new Error(`${r.id} has no BMC in the inventory`);
      let password = '';
      if (r.bmcSecret) {
        if (!this.o.secretKey) throw new Error(`${r.id}: BOOTORCH_SECRET_KEY is not set, so its BMC password cannot be read`);
        password = open(this.o.secretKey, r.id, r.bmcSecret);
      }
      const target = { id: r.id, address: r.bmcAddress, username: r.bmcUsername, password };
      return fn(r.bmcDriver === 'ipmi' ? this.o.drivers.ipmi : this.o.drivers.redfish, target);
    });
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
