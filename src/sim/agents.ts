/**
 * What runs on a simulated node after power-on: it boots (reading its BSS entry, as iPXE would), then
 * its bos-reporter tells bootorch the referral token it booted with, and its cfs-state-reporter
 * re-enables its CFS component with `{state: [], enabled: true}`. Both retry with capped backoff like
 * the real agents (min(2 x attempt, 30) s, scaled down by the world's timing), and both stop when the
 * node powers off under them (its generation changes).
 */
import type { Faults } from './faults.ts';
import type { Timers } from './timers.ts';
import type { BssEntry, SimNode } from './types.ts';

/**
 * A network boot as iPXE does it (standalone sites, sim/standalone.ts): the boot entry the node's
 * boot script gave it, or 'disk' when the script said to boot the local disk. Rejects when the node
 * gave up (its own retries spent): it then sits in its firmware, booted into nothing.
 */
export type NetbootHandler = (node: SimNode) => Promise<BssEntry | 'disk'>;

/** Called by a booted node's reporter; throw or reject to make it retry (e.g. 409 mid-transition). */
export type ReportHandler = (xname: string, token: string) => unknown | Promise<unknown>;

export interface AgentTiming {
  /** From power-on to booted (kernel up, agents start), ms. */
  bootDelayMs: number;
  /** Reporter backoff: attempt n waits min(base x n, max) ms (the real one: 2 s x n, max 30 s). */
  reportRetryBaseMs: number;
  reportRetryMaxMs: number;
  /** Re-report period once reported (0 = report once, the default; real: 0.75 x bos_update_frequency). */
  reportIntervalMs: number;
}

export interface AgentHost {
  timers: Timers;
  faults: Faults;
  timing: AgentTiming;
  bss(id: string): BssEntry | undefined;
  /** When set, nodes boot over the network from bootorch instead of reading their BSS entry. */
  netboot(): NetbootHandler | undefined;
  reportHandler(): ReportHandler | undefined;
  /** The token a reportsWrongToken node sends instead of its own. */
  wrongToken(id: string): string;
  /** cfs-state-reporter's PATCH; false when CFS cannot take it now (down, or no record yet). */
  cfsReenable(id: string): boolean;
  onBoot(node: SimNode): void;
  onReport(id: string, token: string): void;
  onReportError(id: string, token: string, attempt: number, error: unknown): void;
  onCfsReenabled(id: string): void;
  /** Disk deploys (sim/deploy-agent.ts): the deploy ramdisk booted / the node booted its disk. */
  deployAgent(node: SimNode): void;
  installedSystem(node: SimNode): void;
}

export class NodeAgents {
  constructor(private readonly host: AgentHost) {}

  /** The node just powered on: boot it after the boot delay, then start its agents. */
  powerOn(node: SimNode): void {
    const gen = node.generation;
    this.host.timers.after(this.host.timing.bootDelayMs, () => {
      if (node.generation !== gen || node.power !== 'on') return;
      if (node.bootDiskOnce) {
        node.bootDiskOnce = false;
        return this.bootDisk(node, gen);
      }
      const netboot = this.host.netboot();
      if (netboot) {
        netboot(node).then(
          (entry) => {
            if (node.generation !== gen || node.power !== 'on') return;
            if (entry === 'disk') return this.bootDisk(node, gen);
            this.booted(node, entry);
          },
          () => {},
        );
        return;
      }
      this.booted(node, this.host.bss(node.id));
    });
  }

  /** The node booted its disk: the installed system, if one was written there. */
  private bootDisk(node: SimNode, gen: number): void {
    node.booted = { kernel: '', initrd: '', params: '', token: '' };
    node.hsmState = 'Ready';
    this.host.onBoot(node);
    this.host.installedSystem(node);
    this.cfsReport(node, gen, 1);
  }

  /** The node booted what its BSS entry (or boot script) said: its agents start. */
  private booted(node: SimNode, entry: BssEntry | undefined): void {
    node.booted = entry
      ? { kernel: entry.kernel, initrd: entry.initrd, params: entry.params, token: entry.token }
      : { kernel: '', initrd: '', params: '', token: '' };
    node.hsmState = 'Ready';
    this.host.onBoot(node);
    this.startAgents(node);
  }

  /** Start the agents of an already booted node (initial state "booted"). */
  startAgents(node: SimNode): void {
    const gen = node.generation;
    // A deploy ramdisk runs the deploy agent, not the reporter.
    if (/(^|\s)bootorch_deploy=1(\s|$)/.test(node.booted?.params ?? '')) return this.host.deployAgent(node);
    // Without a referral token the node booted something BSS did not hand out: nothing to report.
    if (node.booted?.token && !this.host.faults.has('bootsButNeverReports', node.id)) this.report(node, gen, 1);
    this.cfsReport(node, gen, 1);
  }

  private alive(node: SimNode, gen: number): boolean {
    return node.generation === gen && node.power === 'on' && !this.host.timers.isClosed;
  }

  private backoff(attempt: number): number {
    const t = this.host.timing;
    return Math.min(t.reportRetryBaseMs * attempt, t.reportRetryMaxMs);
  }

  private report(node: SimNode, gen: number, attempt: number): void {
    if (!this.alive(node, gen)) return;
    const token = this.host.faults.has('reportsWrongToken', node.id) ? this.host.wrongToken(node.id) : node.booted!.token;
    const retry = (error: unknown) => {
      if (!this.alive(node, gen)) return;
      this.host.onReportError(node.id, token, attempt, error);
      this.host.timers.after(this.backoff(attempt), () => this.report(node, gen, attempt + 1));
    };
    let result: unknown;
    try {
      result = this.host.reportHandler()?.(node.id, token);
    } catch (e) {
      return retry(e);
    }
    Promise.resolve(result).then(() => {
      if (!this.alive(node, gen)) return;
      this.host.onReport(node.id, token);
      const every = this.host.timing.reportIntervalMs;
      if (every > 0) this.host.timers.after(every, () => this.report(node, gen, 1));
    }, retry);
  }

  private cfsReport(node: SimNode, gen: number, attempt: number): void {
    if (!this.alive(node, gen)) return;
    if (this.host.cfsReenable(node.id)) {
      this.host.onCfsReenabled(node.id);
      return;
    }
    this.host.timers.after(this.backoff(attempt), () => this.cfsReport(node, gen, attempt + 1));
  }
}
