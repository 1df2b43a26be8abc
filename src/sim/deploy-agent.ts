/**
 * The simulated nodes' side of a disk deploy, doing what src/api/boot/deploy-agent.sh does on a real
 * node: the deploy agent (started when the node network-booted a ramdisk with `bootorch_deploy=1`)
 * looks itself up with its first heartbeat, picks its disk by the root device hints, downloads the
 * image over real HTTP, checks its sha256, "writes" it (the node remembers the checksum), and
 * heartbeats each step; the installed system (a boot from a disk holding an image) reports `active`.
 * Failures come from the truth where there is one (an unreachable URL, a wrong checksum, hints no
 * disk meets) and from fault knobs where there is none: `diskWriteFails` (write_error) and
 * `deployAgentHangs` (the agent goes silent after it starts downloading: heartbeat_timeout).
 * With a config drive, the agent fetches it from bootorch after verifying the image (write_error when
 * it is not given, the disk untouched) and "writes" it after the image (the node keeps its bytes).
 * Heartbeats the handler refuses or throws on are retried with the reporter's backoff, a few times.
 */
import { createHash } from 'node:crypto';
import { matchDisk, type AgentFailure, type DeployRecord, type Disk, type HeartbeatState } from '../domain/deploy.ts';
import type { Faults } from './faults.ts';
import type { Timers } from './timers.ts';
import type { SimNode } from './types.ts';

export interface Heartbeat {
  state: HeartbeatState;
  reason?: AgentFailure;
  message?: string;
}

/** The engine's deployHeartbeat: the deploy's instructions, or throws (refused, or bootorch unreachable). */
export type DeployHandler = (xname: string, hb: Heartbeat) => Promise<DeployRecord>;

/** bootorch's config drive for a node (what GET /boot/v1/config-drive/<xname> serves), or throws. */
export type ConfigDriveHandler = (xname: string) => Promise<Buffer>;

export interface DeployAgentHost {
  timers: Timers;
  faults: Faults;
  /** Between two steps of the agent, ms. */
  stepMs: number;
  retryMs: number;
  handler(): DeployHandler | undefined;
  configDrive(): ConfigDriveHandler | undefined;
  onHeartbeat(id: string, hb: Heartbeat): void;
}

/** Every simulated node has one disk: sda, 480 GiB, serial SIM-<xname>. */
export function simDisks(node: Pick<SimNode, 'id'>): Disk[] {
  return [{ name: 'sda', sizeBytes: 480 * 2 ** 30, serial: `SIM-${node.id}` }];
}

const ATTEMPTS = 5;

export class SimDeployAgents {
  constructor(private readonly host: DeployAgentHost) {}

  /** The deploy ramdisk booted: run the agent (generation-bound: a power change stops it). */
  runAgent(node: SimNode): void {
    void this.agent(node, node.generation).catch(() => {});
  }

  /** The node booted from its disk: the installed system reports once it is up. */
  runInstalledSystem(node: SimNode): void {
    if (!node.diskImage) return;
    const gen = node.generation;
    this.host.timers.after(this.host.stepMs, () => void this.beat(node, gen, { state: 'active' }).catch(() => {}));
  }

  private alive(node: SimNode, gen: number): boolean {
    return node.generation === gen && node.power === 'on' && !this.host.timers.isClosed;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => this.host.timers.after(ms, resolve));
  }

  /** One heartbeat, retried; throws when the node went away or bootorch kept refusing. */
  private async beat(node: SimNode, gen: number, hb: Heartbeat): Promise<DeployRecord> {
    for (let attempt = 1; ; attempt++) {
      if (!this.alive(node, gen)) throw new Error('node powered off under the agent');
      const handler = this.host.handler();
      try {
        if (!handler) throw new Error('no deploy handler');
        const spec = await handler(node.id, hb);
        this.host.onHeartbeat(node.id, hb);
        return spec;
      } catch (e) {
        if (attempt >= ATTEMPTS) throw e;
        await this.wait(this.host.retryMs * attempt);
      }
    }
  }

  private async agent(node: SimNode, gen: number): Promise<void> {
    const fail = (reason: AgentFailure, message: string) => this.beat(node, gen, { state: 'failed', reason, message });
    const spec = await this.beat(node, gen, { state: 'starting' });
    const disk = matchDisk(simDisks(node), spec.root_device_hints);
    if (!disk) return void (await fail('no_matching_disk', `no disk meets ${JSON.stringify(spec.root_device_hints ?? {})}`));
    await this.wait(this.host.stepMs);
    await this.beat(node, gen, { state: 'downloading', message: spec.image.url });
    if (this.host.faults.has('deployAgentHangs', node.id)) return;
    let bytes: Buffer;
    try {
      const res = await fetch(spec.image.url, { signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      bytes = Buffer.from(await res.arrayBuffer());
    } catch (e) {
      return void (await fail('image_unreachable', `${spec.image.url}: ${e instanceof Error ? e.message : String(e)}`));
    }
    await this.beat(node, gen, { state: 'verifying' });
    const sum = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (sum !== spec.image.checksum) return void (await fail('checksum_mismatch', `got ${sum}`));
    let drive: Buffer | undefined;
    if (spec.config_drive) {
      try {
        const get = this.host.configDrive();
        if (!get) throw new Error('no config drive handler');
        drive = await get(node.id);
      } catch (e) {
        return void (await fail('write_error', `config drive not given: ${e instanceof Error ? e.message : String(e)}`));
      }
    }
    await this.beat(node, gen, { state: 'writing', message: `/dev/${disk.name}` });
    await this.wait(this.host.stepMs);
    if (this.host.faults.has('diskWriteFails', node.id)) return void (await fail('write_error', `dd to /dev/${disk.name}: I/O error`));
    node.diskImage = spec.image.checksum;
    node.configDrive = undefined;
    let note = '';
    if (drive) {
      await this.beat(node, gen, { state: 'writing', message: `config drive: partition 2 of /dev/${disk.name}` });
      node.configDrive = drive;
      note = ' + config drive cidata on partition 2';
    }
    await this.beat(node, gen, { state: 'written', message: `${bytes.length} bytes to /dev/${disk.name}${note}` });
  }
}
