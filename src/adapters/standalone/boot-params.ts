/**
 * BootParamsPort kept by bootorch (what BSS does for CSM): power-on stores each node's kernel,
 * initrd and parameters with a fresh referral token, and the boot-script endpoint
 * (api/boot/routes.ts) answers the node's iPXE request from them. The token maps the node's later
 * report to these artifacts through the same boot_artifacts record the BSS path writes.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { bootParametersOf, setBootParameters } from '../../db/node-inventory.ts';
import { ServiceError } from '../errors.ts';
import type { BootParameters, BootParamsPort } from '../ports.ts';

export class StandaloneBootParams implements BootParamsPort {
  constructor(private readonly db: Db) {}

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
