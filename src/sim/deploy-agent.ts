/**
 * The simulated nodes' side of a disk deploy, doing what src/api/boot/deploy-agent.sh does on a real
 * node: the deploy agent (started when the node network-booted a ramdisk with `bootorch_deploy=1`)
 * exchanges the one-time ticket its boot script carried for its credential, looks itself up with its
 * first heartbeat, picks its disk by the root device hints, downloads the image over real HTTP,
 * checks its sha256, "writes" it (the node remembers the checksum) with the config drive bootorch
 * gives it, and heartbeats each step, WRITTEN with the sha256 of what it wrote; the installed system
 * (a boot from a disk holding an image) finds the ticket bootorch put on that drive, exchanges it for
 * a credential of its own and reports `active`.
 * Failures come from the truth where there is one (an unreachable URL, a wrong checksum, hints no
 * disk meets) and from fault knobs where there is none: `diskWriteFails` (write_error) and
 * `deployAgentHangs` (the agent goes silent after it starts downloading: heartbeat_timeout).
 * The agent fetches the config drive from bootorch after verifying the image (write_error when the boot
 * set asked for one and it is not given, the disk untouched) and "writes" it after the image (the node
 * keeps its bytes).
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
  /** With written: sha256:<hex> of what was written. */
  checksum?: string;
}

/** bootorch's side of a deploy, as a node reaches it (each throws when refused or unreachable). */
export interface DeployHandlers {
  /** The ticket the node's boot script carried (bootorch's boot window for this power-on). */
  bootTicket(xname: string): Promise<string>;
  /** POST /boot/v1/exchange: a ticket for a node credential. */
  exchange(ticket: string): Promise<string>;
  /** The deployHeartbeat mutation with this credential: the deploy's instructions. */
  heartbeat(xname: string, hb: Heartbeat, credential: string): Promise<DeployRecord>;
  /** GET /boot/v1/config-drive/<xname> with this credential. */
  configDrive(xname: string, credential: string): Promise<Buffer>;
}

/** A boot ticket as it lies on a config drive's filesystem (a file's bytes are stored as they are). */
const TICKET_ON_DRIVE = /btk_[A-Za-z0-9_-]{43}/;

export interface DeployAgentHost {
  timers: Timers;
  faults: Faults;
  /** Between two steps of the agent, ms. */
  stepMs: number;
  retryMs: number;
  handlers(): DeployHandlers | undefined;
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

  /** The node booted from its disk: the installed system reports once it is up, with the ticket on its config drive. */
  runInstalledSystem(node: SimNode): void {
    if (!node.diskImage) return;
    const gen = node.generation;
    const ticket = node.configDrive?.toString('latin1').match(TICKET_ON_DRIVE)?.[0];
    if (!ticket) return; // no credential of its own: it cannot report
    this.host.timers.after(
      this.host.stepMs,
      () =>
        void (async () => {
          const credential = await this.call(node, gen, (h) => h.exchange(ticket));
          await this.beat(node, gen, { state: 'active' }, credential);
        })().catch(() => {}),
    );
  }

  private alive(node: SimNode, gen: number): boolean {
    return node.generation === gen && node.power === 'on' && !this.host.timers.isClosed;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => this.host.timers.after(ms, resolve));
  }

  /** One call to bootorch, retried; throws when the node went away or bootorch kept refusing. */
  private async call<T>(node: SimNode, gen: number, f: (h: DeployHandlers) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (!this.alive(node, gen)) throw new Error('node powered off under the agent');
      const handlers = this.host.handlers();
      try {
        if (!handlers) throw new Error('no deploy handlers');
        return await f(handlers);
      } catch (e) {
        if (attempt >= ATTEMPTS) throw e;
        await this.wait(this.host.retryMs * attempt);
      }
    }
  }

  private async beat(node: SimNode, gen: number, hb: Heartbeat, credential: string): Promise<DeployRecord> {
    const spec = await this.call(node, gen, (h) => h.heartbeat(node.id, hb, credential));
    this.host.onHeartbeat(node.id, hb);
    return spec;
  }

  private async agent(node: SimNode, gen: number): Promise<void> {
    const ticket = await this.call(node, gen, (h) => h.bootTicket(node.id));
    const credential = await this.call(node, gen, (h) => h.exchange(ticket));
    const beat = (hb: Heartbeat) => this.beat(node, gen, hb, credential);
    const fail = (reason: AgentFailure, message: string) => beat({ state: 'failed', reason, message });
    const spec = await beat({ state: 'starting' });
    const disk = matchDisk(simDisks(node), spec.root_device_hints);
    if (!disk) return void (await fail('no_matching_disk', `no disk meets ${JSON.stringify(spec.root_device_hints ?? {})}`));
    await this.wait(this.host.stepMs);
    await beat({ state: 'downloading', message: spec.image.url });
    if (this.host.faults.has('deployAgentHangs', node.id)) return;
    let bytes: Buffer;
    try {
      const res = await fetch(spec.image.url, { signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      bytes = Buffer.from(await res.arrayBuffer());
    } catch (e) {
      return void (await fail('image_unreachable', `${spec.image.url}: ${e instanceof Error ? e.message : String(e)}`));
    }
    await beat({ state: 'verifying' });
    const sum = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (sum !== spec.image.checksum) return void (await fail('checksum_mismatch', `got ${sum}`));
    // Every deploy's drive carries the installed system's ticket; one the boot set asked for is required.
    let drive: Buffer | undefined;
    try {
      const handlers = this.host.handlers();
      if (!handlers) throw new Error('no deploy handlers');
      drive = await handlers.configDrive(node.id, credential);
    } catch (e) {
      if (spec.config_drive)
        return void (await fail('write_error', `config drive not given: ${e instanceof Error ? e.message : String(e)}`));
    }
    await beat({ state: 'writing', message: `/dev/${disk.name}` });
    await this.wait(this.host.stepMs);
    if (this.host.faults.has('diskWriteFails', node.id)) return void (await fail('write_error', `dd to /dev/${disk.name}: I/O error`));
    node.diskImage = spec.image.checksum;
    node.configDrive = undefined;
    let note = '';
    if (drive) {
      await beat({ state: 'writing', message: `config drive: partition 2 of /dev/${disk.name}` });
      node.configDrive = drive;
      note = ' + config drive cidata on partition 2';
    }
    await beat({ state: 'written', message: `${bytes.length} bytes to /dev/${disk.name}${note}`, checksum: sum });
  }
}
