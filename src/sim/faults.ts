/**
 * Fault knobs, changeable while the world runs (tests flip them mid-session). Node faults are chosen
 * by name (a set of xnames) or by rate; a rate is decided per node and occurrence by a seeded hash,
 * so "10% of nodes never report" picks the same nodes in every run with the same seed.
 */
import { hashDraw } from './random.ts';
import { NODE_FAULTS, SIM_SERVICES, type BmcFaultSettings, type NodeFault, type ServiceFault, type SimService } from './types.ts';

export interface FaultOptions {
  nodes?: Partial<Record<NodeFault, Iterable<string>>>;
  rates?: Partial<Record<NodeFault, number>>;
  services?: Partial<Record<SimService, ServiceFault>>;
  bmc?: Partial<BmcFaultSettings>;
}

const BMC_DEFAULTS: BmcFaultSettings = { slowMs: 10_000, busyStatus: 503, retryAfter: 1, busyRate: 1 };

/** What a call to a node's BMC should meet, decided once per call. */
export type BmcDecision =
  | { kind: 'ok'; delayMs: number }
  | { kind: 'hang' }
  | { kind: 'refuse' }
  | { kind: 'busy'; status: 429 | 503; retryAfter: number };

/** What a service call should do, decided once per call. */
export type ServiceDecision = { kind: 'ok'; delayMs: number } | { kind: 'down' } | { kind: 'fail'; delayMs: number } | { kind: 'hang' };

export class Faults {
  private readonly nodes = new Map<NodeFault, Set<string>>();
  private readonly rates = new Map<NodeFault, number>();
  private readonly services = new Map<SimService, ServiceFault>();
  private readonly calls = new Map<SimService, number>();
  private bmcSettings: BmcFaultSettings;
  private bmcCalls = 0;

  constructor(
    private readonly seed: number,
    o: FaultOptions = {},
  ) {
    for (const f of NODE_FAULTS) this.nodes.set(f, new Set(o.nodes?.[f] ?? []));
    for (const [f, r] of Object.entries(o.rates ?? {})) this.rates.set(f as NodeFault, r ?? 0);
    for (const s of SIM_SERVICES) this.services.set(s, { ...(o.services?.[s] ?? {}) });
    this.bmcSettings = { ...BMC_DEFAULTS, ...o.bmc };
  }

  /** Merge settings into how the BMC faults behave. */
  setBmc(b: Partial<BmcFaultSettings>): void {
    this.bmcSettings = { ...this.bmcSettings, ...b };
  }

  bmc(): Readonly<BmcFaultSettings> {
    return this.bmcSettings;
  }

  /** Decide what one call to node `id`'s BMC meets (dead wins over refusing, over busy, over slow). */
  decideBmc(id: string): BmcDecision {
    const n = ++this.bmcCalls;
    if (this.has('bmcDead', id)) return { kind: 'hang' };
    if (this.has('bmcRefuses', id)) return { kind: 'refuse' };
    const b = this.bmcSettings;
    if (this.has('bmcBusy', id) && hashDraw(this.seed, 'bmcBusy', id, n) < b.busyRate)
      return { kind: 'busy', status: b.busyStatus, retryAfter: b.retryAfter };
    return { kind: 'ok', delayMs: this.has('bmcSlow', id) ? b.slowMs : 0 };
  }

  /** Replace the set of nodes with this fault. */
  setNodes(fault: NodeFault, ids: Iterable<string>): void {
    this.nodes.set(fault, new Set(ids));
  }

  addNodes(fault: NodeFault, ids: Iterable<string>): void {
    const s = this.nodes.get(fault)!;
    for (const id of ids) s.add(id);
  }

  removeNodes(fault: NodeFault, ids: Iterable<string>): void {
    const s = this.nodes.get(fault)!;
    for (const id of ids) s.delete(id);
  }

  nodesWith(fault: NodeFault): string[] {
    return [...this.nodes.get(fault)!];
  }

  /** Fraction of nodes (0..1) that get this fault in addition to the named ones. */
  setRate(fault: NodeFault, rate: number): void {
    this.rates.set(fault, rate);
  }

  /**
   * Does node `id` have `fault` now? `occurrence` separates independent draws for the same node
   * (e.g. its 1st and 2nd power-on); rate faults with occurrence 0 are sticky per node.
   */
  has(fault: NodeFault, id: string, occurrence = 0): boolean {
    if (this.nodes.get(fault)!.has(id)) return true;
    const rate = this.rates.get(fault) ?? 0;
    return rate > 0 && hashDraw(this.seed, fault, id, occurrence) < rate;
  }

  /** Merge settings into a service's faults; `{}` keys given as undefined are cleared. */
  setService(service: SimService, f: ServiceFault): void {
    this.services.set(service, { ...this.services.get(service), ...f });
  }

  service(service: SimService): Readonly<ServiceFault> {
    return this.services.get(service)!;
  }

  /** Decide the outcome of one call to `service` (draws are keyed by the service's call count). */
  decide(service: SimService, endpoint?: string): ServiceDecision {
    const n = (this.calls.get(service) ?? 0) + 1;
    this.calls.set(service, n);
    const f = this.services.get(service)!;
    if (f.endpoints && !(endpoint && f.endpoints.includes(endpoint))) return { kind: 'ok', delayMs: 0 };
    if (f.down) return { kind: 'down' };
    if (f.timeout) return { kind: 'hang' };
    const delayMs = f.slowMs ?? 0;
    if (f.failRate && hashDraw(this.seed, 'svc', service, n) < f.failRate) return { kind: 'fail', delayMs };
    return { kind: 'ok', delayMs };
  }

  /** Everything back to healthy. */
  clear(): void {
    for (const f of NODE_FAULTS) this.nodes.set(f, new Set());
    this.rates.clear();
    for (const s of SIM_SERVICES) this.services.set(s, {});
    this.bmcSettings = { ...BMC_DEFAULTS };
  }
}
