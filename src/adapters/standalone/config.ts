/**
 * ConfigPort without CFS: a configuration is an executable hook, `<hooksDir>/<name>`, run with the
 * node ids as arguments once those nodes have booted. CFS's semantics (csm-services §1.2, §1.4):
 * no desired configuration needs nothing; power-on sets the configuration disabled with its state
 * cleared (pending); the node's report of the boot bootorch set enables it (as cfs-state-reporter
 * does); exit 0 = configured; a failure counts an error and is retried until error_count reaches
 * the retry policy (3), then failed; a name with no hook is a configuration that does not exist.
 * Nodes enabled within `batchWindowMs` of each other share one run. State is kept in the process
 * (the worker's), so a worker restart re-runs pending hooks: hooks must be idempotent, as playbooks are.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/client.ts';
import { listNodes, reportedCurrentBoot } from '../../db/node-inventory.ts';
import type { ConfigComponent, ConfigPatch, ConfigPort, ConfigurationStatus } from '../ports.ts';

export interface StandaloneConfigOptions {
  /** Folder of hook executables; unset = only the empty configuration exists. */
  hooksDir?: string;
  /** Failures before `failed` (CFS default_batcher_retry_policy, default 3). */
  retryPolicy?: number;
  /** Default 1000 ms. */
  batchWindowMs?: number;
  /** Deadline of one hook run (default 30 min). */
  hookTimeoutMs?: number;
  onHookDone?: (name: string, ids: string[], exitCode: number | null, output: string) => void;
}

interface Record_ {
  desiredConfig: string;
  enabled: boolean;
  errorCount: number;
  /** Outcome of the last run for the current desired configuration. */
  result: 'none' | 'running' | 'applied' | 'failed';
  tags: Record<string, string>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/;

export class StandaloneConfig implements ConfigPort {
  private readonly records = new Map<string, Record_>();
  private readonly queued = new Map<string, Set<string>>();
  private timer?: NodeJS.Timeout;
  private readonly runs = new Set<Promise<void>>();

  constructor(private readonly db: Db, private readonly o: StandaloneConfigOptions = {}) {}

  async getComponents(ids?: string[]): Promise<ConfigComponent[]> {
    const nodes = await listNodes(this.db, ids && [...new Set(ids)]);
    const waiting = nodes.filter((n) => { const r = this.records.get(n.id); return r && !r.enabled && r.desiredConfig && r.result === 'none'; });
    // The node reported the boot bootorch set: enable its configuration (cfs-state-reporter's PATCH).
    for (const id of await reportedCurrentBoot(this.db, waiting.map((n) => n.id))) this.enable(id);
    return nodes.map((n) => this.view(n.id));
  }

  async patchComponents(ids: string[], patch: ConfigPatch): Promise<string[]> {
    const known = new Set((await listNodes(this.db, [...new Set(ids)])).map((n) => n.id));
    for (const id of known) {
      const r = this.record(id);
      const changed = patch.desiredConfig !== undefined && patch.desiredConfig !== r.desiredConfig;
      if (patch.desiredConfig !== undefined) r.desiredConfig = patch.desiredConfig;
      if (patch.tags) r.tags = { ...r.tags, ...patch.tags };
      // CFS resets error_count when desired_config or state is written (§1.3 auto fields).
      if (changed || patch.clearState) { r.errorCount = 0; r.result = 'none'; }
      if (patch.enabled === false) r.enabled = false;
      if (patch.enabled === true) this.enable(id);
    }
    return [...known];
  }

  async configurationExists(name: string): Promise<boolean> {
    return this.hookPath(name) !== undefined;
  }

  /** Resolves when no hook is queued or running (tests). */
  async idle(): Promise<void> {
    while (this.timer || this.runs.size) {
      if (this.timer) await new Promise((r) => setTimeout(r, this.o.batchWindowMs ?? 1000));
      await Promise.all([...this.runs]);
    }
  }

  private record(id: string): Record_ {
    let r = this.records.get(id);
    if (!r) this.records.set(id, (r = { desiredConfig: '', enabled: true, errorCount: 0, result: 'none', tags: {} }));
    return r;
  }

  private status(r: Record_): ConfigurationStatus {
    if (!r.desiredConfig) return 'unconfigured';
    if (!this.hookPath(r.desiredConfig)) return 'unconfigured';
    if (r.result === 'applied') return 'configured';
    return r.errorCount >= (this.o.retryPolicy ?? 3) ? 'failed' : 'pending';
  }

  private view(id: string): ConfigComponent {
    const r = this.record(id);
    return { id, desiredConfig: r.desiredConfig, configurationStatus: this.status(r), enabled: r.enabled, errorCount: r.errorCount, tags: { ...r.tags } };
  }

  private enable(id: string) {
    const r = this.record(id);
    r.enabled = true;
    if (this.status(r) !== 'pending' || r.result === 'running') return;
    const set = this.queued.get(r.desiredConfig) ?? new Set<string>();
    set.add(id);
    this.queued.set(r.desiredConfig, set);
    this.timer ??= setTimeout(() => this.flush(), this.o.batchWindowMs ?? 1000);
  }

  private flush() {
    this.timer = undefined;
    for (const [name, set] of this.queued) {
      const ids = [...set].filter((id) => { const r = this.record(id); return r.desiredConfig === name && r.result !== 'running'; });
      for (const id of ids) this.record(id).result = 'running';
      const run = this.runHook(name, ids).then(({ code, output }) => {
        for (const id of ids) {
          const r = this.record(id);
          if (r.desiredConfig !== name || r.result !== 'running') continue;
          if (code === 0) r.result = 'applied';
          else { r.result = 'none'; r.errorCount++; if (r.enabled) this.enable(id); }
        }
        this.o.onHookDone?.(name, ids, code, output);
      });
      this.runs.add(run);
      void run.finally(() => this.runs.delete(run));
    }
    this.queued.clear();
  }

  private runHook(name: string, ids: string[]): Promise<{ code: number | null; output: string }> {
    const file = this.hookPath(name)!;
    return new Promise((resolve) => {
      const child = spawn(file, ids, { stdio: ['ignore', 'pipe', 'pipe'], timeout: this.o.hookTimeoutMs ?? 30 * 60_000 });
      let output = '';
      const keep = (d: Buffer) => { output = (output + d.toString()).slice(-4000); };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.on('error', (e) => resolve({ code: null, output: e.message }));
      child.on('close', (code) => resolve({ code, output }));
    });
  }

  private hookPath(name: string): string | undefined {
    if (!this.o.hooksDir || !NAME.test(name)) return undefined;
    const file = path.join(this.o.hooksDir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      return undefined;
    }
  }
}
