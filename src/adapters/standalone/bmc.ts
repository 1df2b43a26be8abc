/**
 * What the standalone power adapter needs from a node's BMC, whatever protocol it speaks: read the
 * power state, press a power button, boot from the network next time. Failures are ServiceErrors of
 * service 'bmc' naming the driver, the call and the node,
 * with `transient` saying whether trying again may help (unreachable, timeout) or not (refused login).
 */
import { ServiceError } from '../errors.ts';
import type { PowerOperation } from '../ports.ts';

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

export type BmcProblem = 'unreachable' | 'timeout' | 'refused_login' | 'unexpected_answer' | 'bmc_error';

/** A classified BMC failure; the kind leads the detail text so an operator can group them. */
export function bmcError(
  driver: string,
  call: string,
  t: Pick<BmcTarget, 'id' | 'address'>,
  kind: BmcProblem,
  detail: string,
  status?: number,
): ServiceError {
  const transient = kind === 'unreachable' || kind === 'timeout' || kind === 'bmc_error';
  return new ServiceError('bmc', `${driver} ${call}`, `${kind}: ${t.id} (BMC ${t.address}): ${detail}`, status, transient);
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
