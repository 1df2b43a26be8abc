/**
 * BootParamsPort kept by bootorch (what BSS does for CSM): power-on stores each node's kernel,
 * initrd and parameters with a fresh referral token, and the boot-script endpoint
 * (api/boot/routes.ts) answers the node's iPXE request from them. The token maps the node's later
 * report to these artifacts through the same boot_artifacts record the BSS path writes.
 * This write is where a boot attempt starts: it opens each node's boot window (db/boot-grants.ts),
 * the only time the boot script hands that node a one-time ticket for its credential.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { bootParametersOf, setBootParameters } from '../../db/node-inventory.ts';
import { openBootWindows } from '../../db/boot-grants.ts';
import { forgetTokens } from '../../auth/token-rows.ts';
import { newAttemptId } from '../../auth/boot-tickets.ts';
import { ServiceError } from '../errors.ts';
import type { BootParameters, BootParamsPort } from '../ports.ts';

export interface StandaloneBootParamsOptions {
  /** How long after power-on the node may fetch its ticket and exchange it, seconds (default 1800). */
  windowSeconds?: number;
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
}

export class StandaloneBootParams implements BootParamsPort {
  constructor(
    private readonly db: Db,
    private readonly o: StandaloneBootParamsOptions = {},
  ) {}

  /** One new token per call, as BSS gives one per PUT. Hosts not in the inventory are refused (not transient). */
  async setBootParameters(p: BootParameters): Promise<{ token: string }> {
    const token = randomUUID();
    const written = await setBootParameters(this.db, p.hosts, { kernel: p.kernel, initrd: p.initrd, params: p.params, token });
    const missing = p.hosts.filter((h) => !written.includes(h));
    if (missing.length) {
      throw new ServiceError(
        'bss',
        'standalone boot parameters',
        `not in the node inventory: ${missing.slice(0, 10).join(', ')}`,
        undefined,
        false,
      );
    }
    const revoked = await openBootWindows(this.db, written, {
      windowSeconds: this.o.windowSeconds ?? 1800,
      now: (this.o.now ?? (() => new Date()))(),
      attempt: newAttemptId,
    });
    forgetTokens(revoked);
    return { token };
  }

  async getBootParameters(hosts: string[]): Promise<BootParameters[]> {
    return (await bootParametersOf(this.db, hosts)).map((r) => ({
      hosts: [r.id],
      kernel: r.bootKernel,
      initrd: r.bootInitrd,
      params: r.bootParams,
    }));
  }
}
