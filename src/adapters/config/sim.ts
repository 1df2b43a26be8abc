/**
 * ConfigPort over the simulated world, paged and batched exactly like the HTTP client (GET 200 ids
 * per call following `next`, PATCH 1000 ids per call) so call counters mean the same in both modes.
 */
import type { CfsComponent } from '../../sim/types.ts';
import type { SimWorld } from '../../sim/world.ts';
import { CFS_GET_BATCH, CFS_PATCH_BATCH, EP, chunks, type SettingsRef } from '../common.ts';
import type { ConfigComponent, ConfigPatch, ConfigPort } from '../ports.ts';
import type { ListQuery } from '../../sim/cfs.ts';
import { wirePatch } from './wire.ts';

export class SimConfig implements ConfigPort {
  constructor(
    private readonly world: SimWorld,
    private readonly settings: SettingsRef,
  ) {}

  private enter(endpoint: string) {
    return this.world.enter('cfs', endpoint, this.settings.timeoutMs('cfs'));
  }

  async getComponents(ids?: string[]): Promise<ConfigComponent[]> {
    if (ids === undefined) return this.pages({});
    const out: ConfigComponent[] = [];
    for (const chunk of chunks(ids, CFS_GET_BATCH)) out.push(...(await this.pages({ ids: chunk.join(',') })));
    return out;
  }

  private async pages(q: ListQuery): Promise<ConfigComponent[]> {
    const out: ConfigComponent[] = [];
    let query: ListQuery | undefined = q;
    while (query) {
      await this.enter(EP.cfsComponents);
      const page = this.world.cfs.list(query);
      out.push(...page.components.map((c) => this.view(c)));
      query = page.next ? { ...q, after_id: String(page.next.after_id), limit: Number(page.next.limit) } : undefined;
    }
    return out;
  }

  private view(c: CfsComponent): ConfigComponent {
    return {
      id: c.id,
      desiredConfig: c.desired_config,
      enabled: c.enabled,
      errorCount: c.error_count,
      tags: { ...c.tags },
      configurationStatus: this.world.cfs.status(c.id)!,
    };
  }

  async patchComponents(ids: string[], patch: ConfigPatch): Promise<string[]> {
    const out: string[] = [];
    for (const chunk of chunks(ids, CFS_PATCH_BATCH)) {
      await this.enter(EP.cfsPatch);
      out.push(...this.world.cfs.patchWhere({ ids: chunk.join(',') }, wirePatch(patch)));
    }
    return out;
  }

  async configurationExists(name: string): Promise<boolean> {
    await this.enter(EP.cfsConfiguration);
    return this.world.cfs.configurations.has(name);
  }
}
