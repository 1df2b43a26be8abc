/**
 * What the standalone power adapter needs from a node's BMC, whatever protocol it speaks: read the
 * power state, press a power button, boot from the network next time. Failures are BmcErrors
 * (ServiceErrors of service 'bmc') naming the driver, the call and the node, with their kind, and
 * `transient` saying whether trying again may help (unreachable, timeout) or not (refused login).
 */
import { ServiceError } from '../errors.ts';
import type { PowerOperation, PowerState, PowerUnknownCause } from '../ports.ts';
import { openFileLimit } from './connections.ts';

export interface BmcTarget {
  /** The node (xname), for error texts. */
  id: string;
  /** ipmi: host[:port]; redfish: the ComputerSystem URL. */
  address: string;
  username: string;
  password: string;
}

export interface BmcDriver {
  /** 'on' or 'off'. */
  powerState(t: BmcTarget): Promise<'on' | 'off'>;
  /** Next boot from the network (once), then power on; or a soft / forced power off. */
  power(t: BmcTarget, op: PowerOperation): Promise<void>;
  /** Disk deploys: next boot from the disk, then a power cycle (a power-on when off). */
  bootFromDisk(t: BmcTarget): Promise<void>;
}

/**
 * local_resources: the BMC was not asked, as this process or its host ran out of what a call needs
 * (open files, local ports, processes): not the BMC's failure, and not counted against its circuit.
 */
export type BmcProblem = 'unreachable' | 'timeout' | 'refused_login' | 'unexpected_answer' | 'bmc_error' | 'local_resources';

/** What a node's power is when a BMC call fails with this problem (ports.ts; the failure reason too). */
const CAUSE: Record<BmcProblem, PowerUnknownCause> = {
  unreachable: 'bmc_unreachable',
  timeout: 'bmc_timeout',
  refused_login: 'bmc_auth_failed',
  unexpected_answer: 'bmc_error',
  bmc_error: 'bmc_error',
  local_resources: 'local_resources',
};

/** A classified BMC failure: its kind travels with it and leads the detail text so an operator can group them. */
export class BmcError extends ServiceError {
  constructor(
    readonly kind: BmcProblem,
    call: string,
    message: string,
    status?: number,
  ) {
    super('bmc', call, message, status, kind === 'unreachable' || kind === 'timeout' || kind === 'bmc_error' || kind === 'local_resources');
  }
}

export function bmcError(
  driver: string,
  call: string,
  t: Pick<BmcTarget, 'id' | 'address'>,
  kind: BmcProblem,
  detail: string,
  status?: number,
): BmcError {
  return new BmcError(kind, `${driver} ${call}`, `${kind}: ${t.id} (BMC ${t.address}): ${detail}`, status);
}

/** What each local error code means: bootorch's own limits, not the BMC's. */
const LOCAL: Record<string, string> = {
  EMFILE: "this process's open-file limit is reached",
  ENFILE: "the host's open-file limit is reached",
  EADDRNOTAVAIL: 'no local port or address is free for a new connection',
  EAGAIN: 'out of a kernel resource (processes, or routing entries for a new connection)',
  ENOMEM: 'out of memory',
};

/**
 * The text of a failure that is this process's or host's, not the BMC's (EMFILE, ENFILE,
 * EADDRNOTAVAIL; EAGAIN and ENOMEM from starting a process), or null. Names the code, what it means and
 * what to do, with the open-file limit when it is known.
 */
export function localFailure(e: unknown): string | null {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof err?.cause?.code === 'string' ? err.cause.code : typeof err?.code === 'string' ? err.code : '';
  const what = LOCAL[code];
  if (!what) return null;
  const limit = code === 'EMFILE' ? openFileLimit() : null;
  const files = limit === null ? '' : ` (${limit} files)`;
  return `${code}: ${what}${files}: the BMC was not asked; raise the limit (LimitNOFILE, ulimit -n) or lower BOOTORCH_BMC_KEEP_CONNECTIONS and BOOTORCH_BMC_CONCURRENCY`;
}

/**
 * A failed BMC call as the node's power: unknown, with the cause its kind names and the whole error
 * text (the BMC's own message in it). Anything not classified (a password that cannot be opened, a
 * bug) is bmc_error: the power is not known either way.
 */
export function powerUnknown(e: unknown): PowerState {
  return { state: 'unknown', cause: bmcCause(e), error: e instanceof Error ? e.message : String(e) };
}

/** The cause a failed BMC call names (bmc_error when it is not a classified BmcError). */
export function bmcCause(e: unknown): PowerUnknownCause {
  return e instanceof BmcError ? CAUSE[e.kind] : 'bmc_error';
}

/** One operation at a time per key (Ironic's per-node lock); callers queue in order. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(fn);
    this.tails.set(key, next);
    try {
      return await next;
    } finally {
      if (this.tails.get(key) === next) this.tails.delete(key);
    }
  }
}
