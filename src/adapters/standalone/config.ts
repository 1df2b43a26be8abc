/**
 * ConfigPort without CFS: a configuration is an executable hook, `<hooksDir>/<name>`, run with the
 * node ids as arguments once those nodes have booted. CFS's semantics (csm-services §1.2, §1.4):
 * no desired configuration needs nothing; power-on sets the configuration disabled with its state
 * cleared (pending); the node's report of the boot bootorch set enables it (as cfs-state-reporter
 * does); exit 0 = configured; a failure counts an error and is retried until the error count reaches
 * the retry policy (3), then failed; a name with no hook is a configuration that does not exist.
 * The state lives in node_inventory, so every process reads the same answer and a run is claimed by
 * one UPDATE (two workers never run a node twice; a run whose worker died is claimed again after the
 * hook timeout). Nodes due within `batchWindowMs` of each other share one run. Hooks must be
 * idempotent, as playbooks are.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/client.ts';
import {
  claimConfigRuns,
  enableBootedConfig,
  finishConfigRun,
  nodeConfigs,
  patchConfig,
  type NodeConfig,
} from '../../db/node-inventory.ts';
import type { ConfigComponent, ConfigPatch, ConfigPort, ConfigurationStatus } from '../ports.ts';

export interface StandaloneConfigOptions {
  /** Folder of hook executables; unset = only the empty configuration exists. */
  hooksDir?: string;
  /** Failures before `failed` (CFS default_batcher_retry_policy, default 3). */
  retryPolicy?: number;
  /** Default 1000 ms. */
  batchWindowMs?: number;
  /** Deadline of one hook run (default 30 min); a run older than this is claimed again. */
  hookTimeoutMs?: number;
  onHookDone?: (name: string, ids: string[], exitCode: number | null, output: string) => void;
  /** A run could not be claimed or recorded (database away): it is tried again at the next schedule. */
  onError?: (e: unknown) => void;
  /** Run hooks in this process (default true: the worker); the API only reads and writes the state. */
  runHooks?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/;

export class StandaloneConfig implements ConfigPort {
  private timer?: NodeJS.Timeout;
  private closed = false;
  private readonly runs = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly o: StandaloneConfigOptions = {},
  ) {}

  /** Also the tick that notices work: booted nodes get their configuration enabled, due runs are scheduled. */
  async getComponents(ids?: string[]): Promise<ConfigComponent[]> {
    let rows = await nodeConfigs(this.db, ids && [...new Set(ids)]);
    if (
      (
        await enableBootedConfig(
          this.db,
          rows.map((r) => r.id),
        )
      ).length
    )
      rows = await nodeConfigs(
        this.db,
        rows.map((r) => r.id),
      );
    if (rows.some((r) => this.due(r))) this.schedule();
    return rows.map((r) => this.view(r));
  }

  async patchComponents(ids: string[], patch: ConfigPatch): Promise<string[]> {
    const patched = await patchConfig(this.db, [...new Set(ids)], {
      desired: patch.desiredConfig,
      enabled: patch.enabled,
      tags: patch.tags,
      restart: patch.clearState,
    });
    if (patch.enabled === true && patched.length) this.schedule();
    return patched;
  }

  async configurationExists(name: string): Promise<boolean> {
    return this.hookPath(name) !== undefined;
  }

  /** Resolves when no run is scheduled or running in this process (tests). */
  async idle(): Promise<void> {
    while (this.timer || this.runs.size) {
      if (this.timer) await new Promise((r) => setTimeout(r, this.o.batchWindowMs ?? 1000));
      await Promise.all([...this.runs]);
    }
  }

  /** No new runs from now on; resolves when the running ones are recorded. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.runs]);
  }

  private get retryPolicy(): number {
    return this.o.retryPolicy ?? 3;
  }

  private get staleSeconds(): number {
    return (this.o.hookTimeoutMs ?? 30 * 60_000) / 1000;
  }

  /** What claimConfigRuns would take (the SQL is the rule; this only decides whether to ask). */
  private due(r: NodeConfig): boolean {
    if (!r.configEnabled || !r.configDesired || r.configErrorCount >= this.retryPolicy) return false;
    if (r.configState === 'running') return !!r.configStartedAt && Date.now() - r.configStartedAt.getTime() > this.staleSeconds * 1000;
    return r.configState === '';
  }

  private status(r: NodeConfig): ConfigurationStatus {
    if (!r.configDesired || !this.hookPath(r.configDesired)) return 'unconfigured';
    if (r.configState === 'applied') return 'configured';
    return r.configErrorCount >= this.retryPolicy ? 'failed' : 'pending';
  }

  private view(r: NodeConfig): ConfigComponent {
    return {
      id: r.id,
      desiredConfig: r.configDesired,
      configurationStatus: this.status(r),
      enabled: r.configEnabled,
      errorCount: r.configErrorCount,
      tags: { ...r.configTags },
    };
  }

  private schedule() {
    if (this.closed || this.o.runHooks === false) return;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const run = this.flush().catch((e) => this.o.onError?.(e));
      this.runs.add(run);
      void run.finally(() => this.runs.delete(run));
    }, this.o.batchWindowMs ?? 1000);
  }

  /** Claim what is due, one run per configuration; a failure schedules the retry. */
  private async flush(): Promise<void> {
    const claimed = await claimConfigRuns(this.db, this.retryPolicy, this.staleSeconds);
    const byName = new Map<string, string[]>();
    for (const c of claimed) byName.set(c.desired, [...(byName.get(c.desired) ?? []), c.id]);
    await Promise.all(
      [...byName].map(async ([name, ids]) => {
        const { code, output } = await this.runHook(name, ids);
        await finishConfigRun(this.db, ids, name, code === 0);
        this.o.onHookDone?.(name, ids, code, output);
        if (code !== 0) this.schedule();
      }),
    );
  }

  private runHook(name: string, ids: string[]): Promise<{ code: number | null; output: string }> {
    const file = this.hookPath(name);
    if (!file) return Promise.resolve({ code: null, output: `no hook ${name}` });
    return new Promise((resolve) => {
      const child = spawn(file, ids, {
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: this.o.hookTimeoutMs ?? 30 * 60_000,
        env: hookEnvironment(process.env),
      });
      let output = '';
      const keep = (d: Buffer) => {
        output = (output + d.toString()).slice(-4000);
      };
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

/** bootorch's own settings, and anything named like a credential, are not a hook's business. */
const NOT_FOR_HOOKS = /^(DATABASE_|CSM_|OIDC_|BOOTORCH_|S3_)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

/**
 * The environment a hook runs with: bootorch's, less its credentials and settings (the database URL,
 * the CSM token, the sealing key, ...), so a playbook or script gets what the site set for it (PATH,
 * HOME, SSH_AUTH_SOCK, proxies) and nothing it could leak.
 */
export function hookEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !NOT_FOR_HOOKS.test(k)));
}
