/**
 * The cfs-batcher and the Ansible run, inline (csm-services §1.5, §6.1). Every check interval it takes
 * enabled + pending components not already in flight, groups them by (desired config, pending layer
 * indices, last layer status), sends a batch when full or when its window has passed, and after the
 * run time records the result the way the AEE's aggregator would: every pending layer `applied` with
 * error_count 0, or, for a node with the configurationFails fault, the first pending layer `failed`
 * with error_count + 1. A failed node stays pending and is retried until its retry policy is spent.
 *
 * It only looks where something changed: a component write calls `touch(id)`, a configuration or
 * option change `touch()` (everything), and a check considers just those components. Status only
 * changes on such writes, so this selects exactly what the real batcher's full scan would, without
 * rescanning 100,000 components every check.
 */
import { cfsTime, configurationStatus, layerStatuses, type CfsOptions, type ComponentPatch } from './cfs.ts';
import type { Timers } from './timers.ts';
import type { CfsComponent, CfsConfiguration } from './types.ts';

export interface BatcherOptions {
  /** Max nodes per session (CFS batch_size; default 25). */
  batchSize?: number;
  /** Max wait from a batch's first member to its send, ms (CFS batch_window; default 20). */
  batchWindowMs?: number;
  /** Pause between checks, ms (CFS batcher_check_interval; default 10). */
  checkIntervalMs?: number;
  /** How long one session's Ansible run takes, ms (default 20). */
  runTimeMs?: number;
  /** CFS batcher_disable. */
  disabled?: boolean;
}

export interface CfsSessionRecord {
  name: string;
  configuration_name: string;
  configuration_limit: string;
  ansible_limit: string;
  tags: Record<string, string>;
  status: 'pending' | 'running' | 'complete';
  succeeded: 'none' | 'true' | 'false';
  start_time: string;
  completion_time?: string;
}

export interface BatcherHost {
  timers: Timers;
  components(): Iterable<CfsComponent>;
  component(id: string): CfsComponent | undefined;
  configurations: ReadonlyMap<string, CfsConfiguration>;
  options: CfsOptions;
  patch(id: string, p: ComponentPatch): void;
  /** Does this node's configuration fail on its `attempt`-th run? */
  configFails(id: string, attempt: number): boolean;
  newSessionName(): string;
  onSession(s: CfsSessionRecord, members: string[]): void;
  onConfigured(id: string, session: string, ok: boolean): void;
  /** After every check: how many components wait in open batches and how many are in flight. */
  onCheck(open: number, inFlight: number): void;
}

interface Batch {
  key: string;
  config: CfsConfiguration;
  pending: number[];
  members: string[];
  start: number;
}

const KEEP_SESSIONS = 1000;

export class Batcher {
  readonly sessions = new Map<string, CfsSessionRecord>();
  private readonly inFlight = new Set<string>();
  private open: Batch[] = [];
  private armed?: () => void;
  /** Components to look at in the next check; 'all' after a configuration or option change. */
  private candidates: Set<string> | 'all' = 'all';
  private readonly attempts = new Map<string, number>();
  readonly o: Required<BatcherOptions>;

  constructor(
    private readonly host: BatcherHost,
    o: BatcherOptions = {},
  ) {
    this.o = {
      batchSize: o.batchSize ?? 25,
      batchWindowMs: o.batchWindowMs ?? 20,
      checkIntervalMs: o.checkIntervalMs ?? 10,
      runTimeMs: o.runTimeMs ?? 20,
      disabled: o.disabled ?? false,
    };
  }

  /** Component `id` (or, without an id, anything) changed: make sure one check is coming. */
  touch(id?: string): void {
    if (id === undefined) this.candidates = 'all';
    else if (this.candidates !== 'all') this.candidates.add(id);
    this.arm();
  }

  /** One check is coming (repeated calls collapse into it). */
  private arm(): void {
    if (this.armed || this.host.timers.isClosed) return;
    this.armed = this.host.timers.after(this.o.checkIntervalMs, () => {
      this.armed = undefined;
      this.check();
    });
  }

  set(o: BatcherOptions): void {
    Object.assign(this.o, Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
    this.touch();
  }

  /** Ids queued or running in a batch. */
  get busy(): ReadonlySet<string> {
    return this.inFlight;
  }

  /** Nothing queued, running or about to be checked. */
  get idle(): boolean {
    return !this.armed && this.inFlight.size === 0;
  }

  private check(): void {
    try {
      this.scan();
    } finally {
      this.host.onCheck(
        this.open.reduce((n, b) => n + b.members.length, 0),
        this.inFlight.size,
      );
    }
  }

  private scan(): void {
    if (this.o.disabled) return;
    const { configurations, options } = this.host;
    const look = this.candidates;
    this.candidates = new Set();
    const pool = look === 'all' ? this.host.components() : [...look].map((id) => this.host.component(id));
    for (const c of pool) {
      // In-flight ones come back as candidates when their batch finishes (the run patches them).
      if (!c || !c.enabled || this.inFlight.has(c.id)) continue;
      if (configurationStatus(c, configurations, options) !== 'pending') continue;
      const config = configurations.get(c.desired_config);
      if (!config) continue;
      const pending = layerStatuses(c, config, options).flatMap((s, i) => (s === 'pending' ? [i] : []));
      const key = `${c.desired_config}:${pending.join(',')}:${c.state.at(-1)?.status ?? ''}`;
      let batch = this.open.find((b) => b.key === key && b.members.length < this.o.batchSize);
      if (!batch) {
        batch = { key, config, pending, members: [], start: Date.now() };
        this.open.push(batch);
      }
      batch.members.push(c.id);
      this.inFlight.add(c.id);
    }
    const now = Date.now();
    const ready = this.open.filter((b) => b.members.length >= this.o.batchSize || now - b.start >= this.o.batchWindowMs);
    this.open = this.open.filter((b) => !ready.includes(b));
    for (const b of ready) this.send(b);
    if (this.open.length) this.arm();
  }

  private send(b: Batch): void {
    const name = this.host.newSessionName();
    const session: CfsSessionRecord = {
      name,
      configuration_name: b.config.name,
      configuration_limit: b.pending.join(','),
      ansible_limit: b.members.join(','),
      tags: this.commonTags(b.members),
      status: 'running',
      succeeded: 'none',
      start_time: cfsTime(),
    };
    this.sessions.set(name, session);
    this.trimSessions();
    this.host.onSession(session, b.members);
    this.host.timers.after(this.o.runTimeMs, () => this.finish(b, session));
  }

  private finish(b: Batch, session: CfsSessionRecord): void {
    let anyFailed = false;
    for (const id of b.members) {
      this.inFlight.delete(id);
      const c = this.host.component(id);
      if (!c) continue;
      const attempt = (this.attempts.get(id) ?? 0) + 1;
      this.attempts.set(id, attempt);
      const fails = this.host.configFails(id, attempt);
      anyFailed ||= fails;
      const layers = fails ? b.pending.slice(0, 1) : b.pending;
      for (const i of layers) {
        const l = b.config.layers[i]!;
        this.host.patch(id, {
          state_append: {
            session_name: session.name,
            clone_url: l.clone_url,
            playbook: l.playbook || this.host.options.default_playbook,
            commit: `${l.commit}${fails ? '_failed' : ''}`,
          },
          // The aggregator sends GET error_count + 1 for a failed host, 0 for a good one.
          error_count: fails ? c.error_count + 1 : 0,
        });
      }
      this.host.onConfigured(id, session.name, !fails);
    }
    session.status = 'complete';
    session.succeeded = anyFailed ? 'false' : 'true';
    session.completion_time = cfsTime();
    // Members were patched (and so touched); touching again covers any that were not.
    for (const id of b.members) this.touch(id);
  }

  private commonTags(members: string[]): Record<string, string> {
    const all = members.map((id) => this.host.component(id)?.tags ?? {});
    const first = all[0] ?? {};
    return Object.fromEntries(Object.entries(first).filter(([k, v]) => all.every((t) => t[k] === v)));
  }

  private trimSessions(): void {
    for (const [name, s] of this.sessions) {
      if (this.sessions.size <= KEEP_SESSIONS) break;
      if (s.status === 'complete') this.sessions.delete(name);
    }
  }
}
