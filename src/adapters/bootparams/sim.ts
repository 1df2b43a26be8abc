/** BootParamsPort over the simulated world: each PUT gets a new referral token, as BSS does. */
import type { SimWorld } from '../../sim/world.ts';
import { EP, type SettingsRef } from '../common.ts';
import type { BootParameters, BootParamsPort } from '../ports.ts';
import { ServiceError } from '../errors.ts';

export class SimBootParams implements BootParamsPort {
  constructor(
    private readonly world: SimWorld,
    private readonly settings: SettingsRef,
  ) {}

  async setBootParameters(p: BootParameters): Promise<{ token: string }> {
    await this.world.enter('bss', EP.bssPut, this.settings.timeoutMs('bss'));
    const refusal = this.world.bootParametersRefusal(p.hosts);
    if (refusal) throw new ServiceError('bss', EP.bssPut, refusal, 400, false);
    return { token: this.world.setBootParameters(p) };
  }

  async getBootParameters(hosts: string[]): Promise<BootParameters[]> {
    if (hosts.length === 0) return [];
    await this.world.enter('bss', EP.bssGet, this.settings.timeoutMs('bss'));
    return hosts.flatMap((h) => {
      const e = this.world.bss.get(h);
      return e ? [{ hosts: [h], kernel: e.kernel, initrd: e.initrd, params: e.params }] : [];
    });
  }
}
