/**
 * The world's events and counters. Tests wait on events with a deadline instead of sleeping, and
 * assert on counters ("no extra power action", "one call per chunk").
 */
import { EventEmitter } from 'node:events';
import type { PcsOperation } from './power.ts';
import type { PowerValue } from './types.ts';

export interface SimEvents {
  /** A PCS transition was accepted. */
  transition: { transitionId: string; operation: PcsOperation; ids: string[] };
  /** A node's power changed. */
  power: { id: string; state: PowerValue; operation: PcsOperation };
  /** A power task failed (ignored soft-off, never powers on, unknown node, superseded). */
  'power-failed': { id: string; operation: PcsOperation; error: string };
  /** A node booted; token is the referral token of the BSS entry it booted from ('' if none). */
  boot: { id: string; token: string };
  /** A node's bos-reporter delivered its report. */
  report: { id: string; token: string };
  /** A report was refused (the callback threw); the reporter retries. */
  'report-error': { id: string; token: string; attempt: number; error: unknown };
  /** A node's cfs-state-reporter re-enabled its CFS component. */
  'cfs-enabled': { id: string };
  /** BSS stored boot parameters for hosts under a new token. */
  bss: { hosts: string[]; token: string };
  /** The batcher started a CFS session. */
  'cfs-session': { name: string; configuration: string; ids: string[] };
  /** A node's configuration run finished. */
  configured: { id: string; session: string; ok: boolean };
  /** The batcher finished a check (queued: in open batches; inFlight: queued or running). */
  'batcher-check': { queued: number; inFlight: number };
  /** A node's deploy agent (or installed system) delivered a heartbeat (sim/deploy-agent.ts). */
  'deploy-heartbeat': { id: string; state: string; reason?: string; message?: string };
  /** A service endpoint was called (adapters and the HTTP server). */
  call: { service: string; endpoint: string };
}

export type SimEventName = keyof SimEvents;

export class WorldEvents extends EventEmitter {
  emitEvent<K extends SimEventName>(name: K, payload: SimEvents[K]): void {
    this.emit(name, payload);
    this.emit('*', name, payload);
  }

  onEvent<K extends SimEventName>(name: K, fn: (p: SimEvents[K]) => void): () => void {
    this.on(name, fn);
    return () => this.off(name, fn);
  }

  /** The next `name` event whose payload satisfies `match`; rejects after `timeoutMs`. */
  waitFor<K extends SimEventName>(name: K, match: (p: SimEvents[K]) => boolean, timeoutMs: number): Promise<SimEvents[K]> {
    return new Promise((resolve, reject) => {
      const fn = (p: SimEvents[K]) => {
        if (!match(p)) return;
        done();
        resolve(p);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`sim: no '${name}' event within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        this.off(name, fn);
        clearTimeout(timer);
      };
      this.on(name, fn);
    });
  }

  /** Resolves once `cond()` holds, re-checked after every event; rejects after `timeoutMs`. */
  waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!cond()) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`sim: ${what} not reached within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        this.off('*', check);
        clearTimeout(timer);
      };
      this.on('*', check);
    });
  }
}

export class Counters {
  /** operation -> xname -> transitions requested. */
  readonly transitions = new Map<string, Map<string, number>>();
  /** "service METHOD /path" -> calls. */
  readonly calls = new Map<string, number>();
  /** Requests at the nodes' BMCs (the Redfish face) being answered now, by node, and the most ever at once. */
  readonly bmcInFlight = new Map<string, number>();
  bmcMax = 0;
  /** The most requests one node's BMC had at once. */
  bmcMaxPerNode = 0;
  /** BMC answers that were 429 or 503 (the bmcBusy fault). */
  bmcBusyAnswers = 0;
  /** Standalone nodes' network boots (sim/standalone.ts): requests to bootorch's /boot/v1 by outcome. */
  readonly pxe = { scripts: 0, local: 0, exchanges: 0, drives: 0, retried: 0, throttled: 0, failed: 0 };
  private bmcNow = 0;

  /** A request at node `id`'s BMC starts; the returned function ends it (once). */
  enterBmc(id: string): () => void {
    const n = (this.bmcInFlight.get(id) ?? 0) + 1;
    this.bmcInFlight.set(id, n);
    this.bmcNow++;
    this.bmcMax = Math.max(this.bmcMax, this.bmcNow);
    this.bmcMaxPerNode = Math.max(this.bmcMaxPerNode, n);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.bmcNow--;
      const m = (this.bmcInFlight.get(id) ?? 1) - 1;
      if (m) this.bmcInFlight.set(id, m);
      else this.bmcInFlight.delete(id);
    };
  }

  countTransition(op: string, id: string): void {
    const m = this.transitions.get(op) ?? new Map<string, number>();
    m.set(id, (m.get(id) ?? 0) + 1);
    this.transitions.set(op, m);
  }

  countCall(service: string, endpoint: string): void {
    const k = `${service} ${endpoint}`;
    this.calls.set(k, (this.calls.get(k) ?? 0) + 1);
  }

  /** Transitions of `op` requested for node `id`, or for all nodes when no id. */
  transitionCount(op: string, id?: string): number {
    const m = this.transitions.get(op);
    if (!m) return 0;
    if (id !== undefined) return m.get(id) ?? 0;
    let n = 0;
    for (const v of m.values()) n += v;
    return n;
  }

  /** Calls to a service, or to one endpoint of it (`'POST /transitions'`). */
  callCount(service: string, endpoint?: string): number {
    if (endpoint !== undefined) return this.calls.get(`${service} ${endpoint}`) ?? 0;
    let n = 0;
    for (const [k, v] of this.calls) if (k.startsWith(`${service} `)) n += v;
    return n;
  }

  reset(): void {
    this.transitions.clear();
    this.calls.clear();
    this.bmcMax = this.bmcNow;
    this.bmcMaxPerNode = Math.max(0, ...this.bmcInFlight.values());
  }
}
