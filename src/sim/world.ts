/**
 * A deterministic simulated HPE Cray EX machine: HSM inventory, PCS power, BSS boot parameters, CFS
 * components with its batcher, image manifests in S3, and the agents on each node. The in-process
 * adapters (src/adapters/ * /sim.ts) and the HTTP server (src/sim/server.ts) are two views of one world.
 *
 * Time is real but short (every delay is a knob, a few ms by default); tests wait on `events` with a
 * deadline (`waitFor`, `waitUntil`), never on the clock. `close()` cancels every timer.
 */
import { ServiceError } from '../adapters/errors.ts';
import { NodeAgents, type AgentTiming, type NetbootHandler, type ReportHandler } from './agents.ts';
import { SimDeployAgents, type DeployHandlers } from './deploy-agent.ts';
import { Batcher, type BatcherOptions } from './batcher.ts';
import { CfsStore } from './cfs-store.ts';
import type { CfsOptions } from './cfs.ts';
import { Counters, WorldEvents, type SimEventName, type SimEvents } from './events.ts';
import { Faults, type FaultOptions, type ServiceDecision } from './faults.ts';
import { ImageStore, type SimImage } from './images.ts';
import { buildLayout, type LayoutOptions } from './layout.ts';
import { PowerControl, type PcsOperation, type PowerTiming } from './power.ts';
import { fnv1a, mulberry32, uuidFrom } from './random.ts';
import { Timers } from './timers.ts';
import type { BssEntry, CfsLayer, SimNode, SimService } from './types.ts';

export type WorldTiming = PowerTiming & AgentTiming;

export const DEFAULT_TIMING: WorldTiming = {
  powerStatusLagMs: 0,
  powerOnDelayMs: 5,
  powerOffDelayMs: 5,
  forceOffDelayMs: 2,
  bootDelayMs: 5,
  reportRetryBaseMs: 5,
  reportRetryMaxMs: 50,
  reportIntervalMs: 0,
};

export interface InitialState {
  /** Every node on or off (default off). */
  power?: 'on' | 'off';
  /** Nodes are on and booted from BSS entries with these artifacts (true = the default image). */
  booted?: true | { kernel?: string; initrd?: string; params?: string; token?: string };
  /** CFS desired_config of every node (default ''); with `configured` (default true) its layers are applied. */
  desiredConfig?: string;
  configured?: boolean;
}

export interface WorldOptions extends LayoutOptions, Partial<WorldTiming> {
  /** PRNG seed (default 1). */
  seed?: number;
  locked?: string[];
  disabled?: string[];
  batcher?: BatcherOptions;
  cfsOptions?: Partial<CfsOptions>;
  /** CFS configurations to create (default `compute-cfg` and `uan-cfg`, one layer each). */
  configurations?: Record<string, CfsLayer[]>;
  initial?: InitialState;
  faults?: FaultOptions;
  /** The node reporters' callback (the engine's reportBootState); settable later with setReportHandler. */
  onReport?: ReportHandler;
}

export class SimWorld {
  readonly seed: number;
  readonly timers = new Timers();
  readonly events = new WorldEvents();
  readonly counters = new Counters();
  readonly faults: Faults;
  readonly timing: WorldTiming;
  readonly nodes = new Map<string, SimNode>();
  readonly groups: Map<string, string[]>;
  readonly partitions: Map<string, string[]>;
  readonly bss = new Map<string, BssEntry>();
  readonly images: ImageStore;
  readonly defaultImage: SimImage;
  readonly power: PowerControl;
  readonly cfs: CfsStore;
  readonly batcher: Batcher;
  private readonly agents: NodeAgents;
  private readonly rand: () => number;
  private reporter?: ReportHandler;
  private deployHandlers?: DeployHandlers;
  private netbootHandler?: NetbootHandler;
  private deploys!: SimDeployAgents;

  constructor(o: WorldOptions = {}) {
    this.seed = o.seed ?? 1;
    this.rand = mulberry32(fnv1a(`world:${this.seed}`));
    this.events.setMaxListeners(0);
    this.timing = { ...DEFAULT_TIMING, ...pickTiming(o) };
    this.faults = new Faults(this.seed, o.faults);
    const layout = buildLayout(this.seed, o);
    for (const n of layout.nodes) this.nodes.set(n.id, n);
    this.groups = layout.groups;
    this.partitions = layout.partitions;
    for (const id of o.locked ?? []) if (this.nodes.has(id)) this.nodes.get(id)!.locked = true;
    for (const id of o.disabled ?? []) if (this.nodes.has(id)) this.nodes.get(id)!.enabled = false;
    this.reporter = o.onReport;
    this.images = new ImageStore(() => this.newId());
    this.defaultImage = this.images.addImage();

    this.cfs = new CfsStore(o.cfsOptions, (id) => this.batcher?.touch(id));
    const commit = '0123456789abcdef0123456789abcdef01234567';
    const configs = o.configurations ?? {
      'compute-cfg': [
        { name: 'compute', clone_url: 'https://api-gw-service-nmn.local/vcs/cray/compute.git', playbook: 'site.yml', commit },
      ],
      'uan-cfg': [{ name: 'uan', clone_url: 'https://api-gw-service-nmn.local/vcs/cray/uan.git', playbook: 'site.yml', commit }],
    };
    for (const [name, layers] of Object.entries(configs)) this.cfs.putConfiguration(name, layers);
    for (const id of this.nodes.keys()) this.cfs.put(id, {});

    this.batcher = new Batcher(
      {
        timers: this.timers,
        components: () => this.cfs.components.values(),
        component: (id) => this.cfs.components.get(id),
        configurations: this.cfs.configurations,
        options: this.cfs.options,
        patch: (id, p) => this.cfs.patch(id, p),
        configFails: (id) => this.faults.has('configurationFails', id),
        newSessionName: () => `batcher-${this.newId()}`,
        onSession: (s, ids) => this.emit('cfs-session', { name: s.name, configuration: s.configuration_name, ids }),
        onConfigured: (id, session, ok) => this.emit('configured', { id, session, ok }),
        onCheck: (queued, inFlight) => this.emit('batcher-check', { queued, inFlight }),
      },
      o.batcher,
    );

    this.power = new PowerControl({
      timers: this.timers,
      faults: this.faults,
      timing: this.timing,
      node: (id) => this.nodes.get(id),
      newId: () => this.newId(),
      setPower: (node, value, op) => this.setPower(node, value, op),
      countTransition: (op, id) => this.counters.countTransition(op, id),
      onFailed: (id, operation, error) => this.emit('power-failed', { id, operation, error }),
    });
    this.agents = new NodeAgents({
      timers: this.timers,
      faults: this.faults,
      timing: this.timing,
      bss: (id) => this.bss.get(id),
      netboot: () => this.netbootHandler,
      reportHandler: () => this.reporter,
      wrongToken: (id) => uuidFrom(mulberry32(fnv1a(`wrong:${this.seed}:${id}`))),
      cfsReenable: (id) => !this.faults.service('cfs').down && this.cfs.patch(id, { state: [], enabled: true }) !== undefined,
      onBoot: (n) => this.emit('boot', { id: n.id, token: n.booted?.token ?? '' }),
      onReport: (id, token) => this.emit('report', { id, token }),
      onReportError: (id, token, attempt, error) => this.emit('report-error', { id, token, attempt, error }),
      onCfsReenabled: (id) => this.emit('cfs-enabled', { id }),
      deployAgent: (n) => this.deploys.runAgent(n),
      installedSystem: (n) => this.deploys.runInstalledSystem(n),
    });
    this.deploys = new SimDeployAgents({
      timers: this.timers,
      faults: this.faults,
      stepMs: this.timing.bootDelayMs,
      retryMs: this.timing.reportRetryBaseMs,
      handlers: () => this.deployHandlers,
      onHeartbeat: (id, hb) => this.emit('deploy-heartbeat', { id, ...hb }),
    });
    this.applyInitial(o.initial ?? {});
  }

  /** Seeded UUIDs for tokens, transition ids, session names. */
  newId(): string {
    return uuidFrom(this.rand);
  }

  node(id: string): SimNode | undefined {
    return this.nodes.get(id);
  }

  ids(): string[] {
    return [...this.nodes.keys()];
  }

  setReportHandler(fn: ReportHandler | undefined): void {
    this.reporter = fn;
  }

  /** bootorch's side of disk deploys for the deploy agents and installed systems (tickets, heartbeats, config drives). */
  setDeployHandlers(h: DeployHandlers | undefined): void {
    this.deployHandlers = h;
  }

  /** Standalone nodes (sim/standalone.ts): power-on boots over the network from bootorch, not from BSS. */
  setNetboot(h: NetbootHandler | undefined): void {
    this.netbootHandler = h;
  }

  /** A BMC's boot override: the node's next boot is from its disk (true) or the network. */
  setBootFromDisk(id: string, disk: boolean): void {
    const n = this.nodes.get(id);
    if (n) n.bootDiskOnce = disk;
  }

  /** Disk deploys: next boot from disk, then a power cycle (on nodes) or a power-on (off nodes). */
  bootFromDisk(ids: string[]): string[] {
    const known = ids.filter((id) => this.nodes.has(id));
    for (const id of known) this.setBootFromDisk(id, true);
    const on = known.filter((id) => this.nodes.get(id)!.power === 'on');
    const off = known.filter((id) => this.nodes.get(id)!.power !== 'on');
    if (on.length) this.transition('Hard-Restart', on);
    if (off.length) this.transition('On', off);
    return ids.filter((id) => !this.nodes.has(id));
  }

  setLocked(ids: Iterable<string>, locked = true): void {
    for (const id of ids) if (this.nodes.has(id)) this.nodes.get(id)!.locked = locked;
  }

  setEnabled(ids: Iterable<string>, enabled = true): void {
    for (const id of ids) if (this.nodes.has(id)) this.nodes.get(id)!.enabled = enabled;
  }

  /** POST /transitions: returns the transition id at once; power changes after the delays. */
  transition(op: PcsOperation, ids: string[]): string {
    const t = this.power.start(op, ids);
    this.emit('transition', { transitionId: t.transitionID, operation: op, ids });
    return t.transitionID;
  }

  /** PUT /boot/v1/bootparameters: overwrite each host's entry; one new token for the whole request. */
  setBootParameters(p: { hosts: string[]; kernel: string; initrd: string; params: string }): string {
    const token = this.newId();
    for (const h of p.hosts) this.bss.set(h, { kernel: p.kernel, initrd: p.initrd, params: p.params, token });
    this.emit('bss', { hosts: p.hosts, token });
    return token;
  }

  /** What PCS power-status says about a node now (lags real power by powerStatusLagMs; BMC faults). */
  observedPower(node: SimNode): { powerState: 'on' | 'off' | 'undefined'; managementState: 'available' | 'unavailable' } {
    if (this.faults.has('powerUndefined', node.id)) return { powerState: 'undefined', managementState: 'unavailable' };
    const lag = this.timing.powerStatusLagMs;
    const stale = lag > 0 && node.prevPower && Date.now() - (node.powerChangedAt ?? 0) < lag;
    return { powerState: stale ? node.prevPower! : node.power, managementState: 'available' };
  }

  /** Count a call to `service endpoint` and decide its fate from the service's fault knobs. */
  decide(service: SimService, endpoint: string): ServiceDecision {
    this.counters.countCall(service, endpoint);
    this.emit('call', { service, endpoint });
    return this.faults.decide(service, endpoint);
  }

  /** BSS's refusal of a boot parameters write naming nodes with the bootParametersRefused fault, if any. */
  bootParametersRefusal(hosts: string[]): string | undefined {
    const refused = hosts.filter((h) => this.faults.has('bootParametersRefused', h));
    return refused.length ? `Bad Request: boot parameters refused for ${refused.join(',')}` : undefined;
  }

  /**
   * The in-process adapters' door to a service: counts the call and turns the fault knobs into
   * what an HTTP client would have thrown (503 down, 500 failure, timeout past `timeoutMs`).
   */
  async enter(service: SimService, endpoint: string, timeoutMs = 20_000): Promise<void> {
    const d = this.decide(service, endpoint);
    const timeout = () => new ServiceError(service, endpoint, `timeout: no response within ${timeoutMs / 1000} s`);
    if (d.kind === 'down') throw new ServiceError(service, endpoint, 'Service Unavailable (simulated outage)', 503);
    // A hung service costs the caller its whole read timeout; in-process we skip the wait.
    if (d.kind === 'hang') throw timeout();
    if (d.delayMs > timeoutMs) {
      await this.timers.sleep(timeoutMs);
      throw timeout();
    }
    if (d.delayMs > 0) await this.timers.sleep(d.delayMs);
    if (d.kind === 'fail') throw new ServiceError(service, endpoint, 'Internal Server Error (simulated failure)', 500);
  }

  on<K extends SimEventName>(name: K, fn: (p: SimEvents[K]) => void): () => void {
    return this.events.onEvent(name, fn);
  }

  emit<K extends SimEventName>(name: K, payload: SimEvents[K]): void {
    this.events.emitEvent(name, payload);
  }

  /** The next `name` event whose payload satisfies `match`, or a rejection after `timeoutMs`. */
  waitFor<K extends SimEventName>(name: K, match: (p: SimEvents[K]) => boolean = () => true, timeoutMs = 5000): Promise<SimEvents[K]> {
    return this.events.waitFor(name, match, timeoutMs);
  }

  /** Resolves once `cond()` holds, re-checking after every world event; rejects after `timeoutMs`. */
  waitUntil(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    return this.events.waitUntil(cond, timeoutMs, what);
  }

  /** Resolves when the batcher has nothing queued, running or scheduled to look at. */
  batcherIdle(timeoutMs = 5000): Promise<void> {
    return this.waitUntil(() => this.batcher.idle, timeoutMs, 'batcher idle');
  }

  /** Stop everything: pending power changes, boots, reports, batches. Idempotent. */
  close(): void {
    this.timers.close();
    this.reporter = undefined;
    this.deployHandlers = undefined;
    this.netbootHandler = undefined;
  }

  private setPower(node: SimNode, value: 'on' | 'off', op: PcsOperation): void {
    node.prevPower = node.power;
    node.powerChangedAt = Date.now();
    node.power = value;
    node.generation++;
    node.powerUpdated = new Date().toISOString();
    if (value === 'off') {
      node.booted = undefined;
      node.hsmState = 'Off';
    } else {
      node.hsmState = 'On';
      this.agents.powerOn(node);
    }
    this.emit('power', { id: node.id, state: value, operation: op });
  }

  private applyInitial(init: InitialState): void {
    const booted = init.booted;
    if (init.power === 'on' || booted) {
      for (const n of this.nodes.values()) {
        n.power = 'on';
        n.hsmState = booted ? 'Ready' : 'On';
      }
    }
    if (booted) {
      const b = booted === true ? {} : booted;
      const img = this.defaultImage;
      const entry: BssEntry = {
        kernel: b.kernel ?? img.kernel,
        initrd: b.initrd ?? img.initrd,
        params: b.params ?? img.bootParameters,
        token: b.token ?? this.newId(),
      };
      for (const n of this.nodes.values()) {
        this.bss.set(n.id, { ...entry });
        n.booted = { ...entry };
      }
    }
    if (init.desiredConfig !== undefined) {
      const cfg = this.cfs.configurations.get(init.desiredConfig);
      const configured = init.configured ?? true;
      for (const id of this.nodes.keys()) {
        const state =
          configured && cfg
            ? cfg.layers.map((l) => ({
                clone_url: l.clone_url,
                playbook: l.playbook || 'site.yml',
                commit: l.commit,
                session_name: 'initial',
              }))
            : [];
        this.cfs.put(id, { desired_config: init.desiredConfig, state });
      }
    }
  }
}

function pickTiming(o: Partial<WorldTiming>): Partial<WorldTiming> {
  const out: Partial<WorldTiming> = {};
  for (const k of Object.keys(DEFAULT_TIMING) as (keyof WorldTiming)[]) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
