/**
 * What stands between bootorch and its nodes' BMCs, whatever the driver (IPMI, Redfish). Keyed by the
 * BMC (its host and port: several Redfish systems of one chassis share a BMC), it gives:
 * - one call in flight per BMC: calls queue in arrival order (a BMC's controller is a small computer
 *   that falls over when asked many things at once; it also keeps a node's power calls in order);
 * - a limit on calls in flight over every BMC (`concurrency`), taken only for the call itself, never
 *   while a call waits its BMC's turn or a backoff;
 * - a circuit per BMC: after `failuresToOpen` failures in a row where the BMC did not answer usefully
 *   (unreachable, timeout, 5xx), calls fail at once with the last failure, the circuit noted in its
 *   text, for `openMs`; then one call is let through as a probe (half-open). A failed probe opens it
 *   again for twice as long (up to `maxOpenMs`, with jitter); any answer closes it. A refused login or
 *   an answer that cannot be read is the BMC answering: it closes the circuit, it does not open it;
 * - backoff on 429 and 503: the call is tried again after the BMC's Retry-After (or `busyWaitMs`,
 *   doubling), at most `busyRetries` times, and the BMC's other calls wait with it.
 * Per process: each worker (and the API, for explain) protects the BMCs from its own calls.
 */
import { ServiceError } from '../errors.ts';
import { Turns } from '../../domain/lists.ts';
import {
  bmcBusyAnswers,
  bmcCallSeconds,
  bmcCallsInFlight,
  bmcCallsRefused,
  bmcCallsWaiting,
  bmcCircuitOpens,
  bmcCircuitsOpen,
  bmcTurnWaitSeconds,
} from '../../observability/metrics.ts';
import { BmcError, KeyedLock, type BmcDriver, type BmcTarget } from './bmc.ts';
import type { PowerOperation } from '../ports.ts';

export interface GuardClock {
  /** ms since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: GuardClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface BmcGuardOptions {
  /** BMC calls in flight at once over every BMC, per process (default 64; BOOTORCH_BMC_CONCURRENCY). */
  concurrency?: number;
  /** Failures in a row that open a BMC's circuit (default 3; BOOTORCH_BMC_CIRCUIT_FAILURES). */
  failuresToOpen?: number;
  /** How long a circuit stays open the first time, ms (default 5000); doubled by each failed probe. */
  openMs?: number;
  /** The longest a circuit stays open before a probe, ms (default 60000; BOOTORCH_BMC_CIRCUIT_MAX_OPEN). */
  maxOpenMs?: number;
  /** 429/503 answers one call waits out before it fails (default 2). */
  busyRetries?: number;
  /** Wait after a 429/503 without Retry-After, ms (default 1000), doubling per retry. */
  busyWaitMs?: number;
  /** The longest Retry-After honoured, ms (default 60000): a BMC asking for more gets this. */
  maxBusyWaitMs?: number;
  clock?: GuardClock;
  /** 0..1, for the open time's jitter (default Math.random). */
  random?: () => number;
}

/** The BMC an address belongs to: `host:port` of a Redfish URL, or of an IPMI `host[:port]` (port 623). */
export function bmcKey(address: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) {
    try {
      const u = new URL(address);
      return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
    } catch {
      return address;
    }
  }
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  return m ? `${m[1]!.toLowerCase()}:${m[2] ?? '623'}` : address.toLowerCase();
}

/** 429/503 answers and their Retry-After (ms; null when the BMC gave none), noted by the drivers. */
const busyAnswers = new WeakMap<Error, number | null>();

/**
 * Note a 429/503 answer so the guard backs off: `retryAfter` is the header's value (seconds, or an
 * HTTP date), as the BMC sent it.
 */
export function markBusy<E extends Error>(e: E, retryAfter: string | null | undefined, now = Date.now()): E {
  let ms: number | null = null;
  const v = retryAfter?.trim();
  if (v && /^\d+$/.test(v)) ms = Number(v) * 1000;
  else if (v && !Number.isNaN(Date.parse(v))) ms = Math.max(0, Date.parse(v) - now);
  busyAnswers.set(e, ms);
  return e;
}

/** Whether a failure means the BMC did not answer usefully (counts toward opening its circuit). */
function isOutage(e: unknown): boolean {
  return e instanceof ServiceError ? e.transient : true;
}

/** The BMC was not asked (this process ran out of files, ports): neither an answer nor an outage of it. */
function notAsked(e: unknown): boolean {
  return e instanceof BmcError && e.kind === 'local_resources';
}

interface Circuit {
  key: string;
  failures: number;
  /** 0: closed; else open until then (ms). */
  openUntil: number;
  /** How many times it opened in a row (the next open lasts openMs * 2^(opens)). */
  opens: number;
  probing: boolean;
  lastError?: Error;
  /** No call before this (ms): the BMC asked us to wait (429/503). */
  busyUntil: number;
  /** Calls waiting or running (the entry is dropped when none and closed). */
  users: number;
}

export class BmcGuard {
  private readonly circuits = new Map<string, Circuit>();
  private readonly lanes = new KeyedLock();
  private readonly turns: Turns;
  private readonly clock: GuardClock;
  private readonly o: Required<Omit<BmcGuardOptions, 'clock' | 'random' | 'concurrency'>> & { random: () => number };

  constructor(o: BmcGuardOptions = {}) {
    this.turns = new Turns(o.concurrency ?? 64);
    this.clock = o.clock ?? systemClock;
    this.o = {
      failuresToOpen: o.failuresToOpen ?? 3,
      openMs: o.openMs ?? 5000,
      maxOpenMs: o.maxOpenMs ?? 60_000,
      busyRetries: o.busyRetries ?? 2,
      busyWaitMs: o.busyWaitMs ?? 1000,
      maxBusyWaitMs: o.maxBusyWaitMs ?? 60_000,
      random: o.random ?? Math.random,
    };
  }

  /** `driver` with every call through this guard. */
  wrap(driver: BmcDriver): BmcDriver {
    return {
      powerState: (t) => this.run(t, () => driver.powerState(t)),
      power: (t, op: PowerOperation) => this.run(t, () => driver.power(t, op)),
      bootFromDisk: (t) => this.run(t, () => driver.bootFromDisk(t)),
    };
  }

  /** The circuit of a BMC: closed, open (until when) or half-open (a probe in flight). */
  state(address: string): { state: 'closed' | 'open' | 'half-open'; failures: number; openUntil: number } {
    const c = this.circuits.get(bmcKey(address));
    if (!c) return { state: 'closed', failures: 0, openUntil: 0 };
    return { state: c.probing ? 'half-open' : c.openUntil ? 'open' : 'closed', failures: c.failures, openUntil: c.openUntil };
  }

  /**
   * Run one BMC call for `t` under the BMC's turn, the global limit, its circuit and its backoff.
   * `first`: the call takes the next free global turn ahead of the others waiting (power actions go
   * before power reads: a read only reports, an action moves a node on).
   */
  async run<T>(t: BmcTarget, call: () => Promise<T>, o: { first?: boolean } = {}): Promise<T> {
    const c = this.circuit(bmcKey(t.address));
    // Open (or probing): fail now, without waiting behind the calls queued at this BMC.
    if (c.openUntil && (c.probing || this.clock.now() < c.openUntil)) throw this.refused(c);
    c.users++;
    try {
      return await this.lanes.run(c.key, () => this.attempt(c, call, o.first ?? false));
    } finally {
      // Forget a BMC with nothing to remember (no failures, not open, not asking us to wait).
      if (--c.users === 0 && !c.failures && !c.openUntil && c.busyUntil <= this.clock.now()) this.circuits.delete(c.key);
    }
  }

  private async attempt<T>(c: Circuit, call: () => Promise<T>, first: boolean): Promise<T> {
    for (let retry = 0; ; retry++) {
      // The circuit may have opened while this call waited its turn.
      if (c.openUntil && this.clock.now() < c.openUntil) throw this.refused(c);
      const probe = c.openUntil > 0;
      c.probing = probe;
      const wait = c.busyUntil - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait);
      try {
        const asked = performance.now();
        bmcCallsWaiting.inc();
        const value = await this.turns.run(async () => {
          bmcCallsWaiting.dec();
          const sent = performance.now();
          bmcTurnWaitSeconds.observe((sent - asked) / 1000);
          bmcCallsInFlight.inc();
          let outcome = 'error';
          try {
            const v = await call();
            outcome = 'ok';
            return v;
          } finally {
            bmcCallsInFlight.dec();
            bmcCallSeconds.observe({ outcome }, (performance.now() - sent) / 1000);
          }
        }, first);
        this.answered(c);
        return value;
      } catch (e) {
        const busy = e instanceof Error ? busyAnswers.get(e) : undefined;
        if (busy !== undefined) {
          bmcBusyAnswers.inc();
          if (retry < this.o.busyRetries) {
            const ms = Math.min(busy ?? this.o.busyWaitMs * 2 ** retry, this.o.maxBusyWaitMs);
            c.busyUntil = Math.max(c.busyUntil, this.clock.now() + ms);
            c.probing = false;
            continue;
          }
        }
        if (notAsked(e)) {
          // Nothing learnt of the BMC: its circuit stays as it was.
        } else if (isOutage(e)) this.failed(c, e instanceof Error ? e : new Error(String(e)), probe);
        else this.answered(c);
        throw e;
      } finally {
        c.probing = false;
      }
    }
  }

  private circuit(key: string): Circuit {
    let c = this.circuits.get(key);
    if (!c) this.circuits.set(key, (c = { key, failures: 0, openUntil: 0, opens: 0, probing: false, busyUntil: 0, users: 0 }));
    return c;
  }

  /** The BMC answered: its circuit closes. */
  private answered(c: Circuit) {
    if (c.openUntil) bmcCircuitsOpen.dec();
    c.failures = 0;
    c.openUntil = 0;
    c.opens = 0;
    c.lastError = undefined;
  }

  private failed(c: Circuit, e: Error, probe: boolean) {
    c.failures++;
    c.lastError = e;
    if (!probe && c.failures < this.o.failuresToOpen) return;
    const base = Math.min(this.o.openMs * 2 ** c.opens, this.o.maxOpenMs);
    // Jitter (0.75x to 1.25x): BMCs that failed together (a switch down) are not all probed at once.
    const ms = Math.round(base * (0.75 + this.o.random() / 2));
    if (!c.openUntil) {
      bmcCircuitsOpen.inc();
      bmcCircuitOpens.inc();
    }
    c.opens++;
    c.openUntil = this.clock.now() + ms;
  }

  /** The error of a call an open circuit refused: the last failure's, saying why no call was made. */
  private refused(c: Circuit): Error {
    bmcCallsRefused.inc();
    const next = Math.max(0, Math.ceil((c.openUntil - this.clock.now()) / 1000));
    const why = c.probing
      ? `circuit half-open at BMC ${c.key}: a probe is in flight, no other call until it answers`
      : `circuit open at BMC ${c.key} after ${c.failures} failures in a row: no call for ${next} s`;
    const last = c.lastError ?? new ServiceError('bmc', 'circuit', `unreachable: BMC ${c.key}: no answer`);
    // The last failure itself, of its own class (the node's power is unknown with its cause), its text
    // saying why no call was made this time.
    const e = Object.assign(Object.create(Object.getPrototypeOf(last)) as Error, last);
    Object.defineProperty(e, 'message', { value: `${last.message} (${why})`, writable: true, configurable: true });
    if (last instanceof ServiceError) Object.assign(e, { detail: `${last.detail} (${why})` });
    return e;
  }
}
