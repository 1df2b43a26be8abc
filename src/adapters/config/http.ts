/**
 * CFS v3 client (csm-services §1.3): GET /v3/components with ids in batches of 200 (four in flight) following `next`
 * (passed back verbatim, minus empty values), PATCH /v3/components dict form with ids filters in
 * batches of 1000, GET /v3/configurations/{name}.
 */
import { z } from 'zod';
import { CFS_GET_BATCH, CFS_GET_CONCURRENCY, CFS_PATCH_BATCH, EP, chunks } from '../common.ts';
import { mapLimit } from '../../domain/lists.ts';
import type { HttpResponse, ServiceClient } from '../http.ts';
import type { ConfigComponent, ConfigPatch, ConfigPort, ConfigurationStatus } from '../ports.ts';
import { wirePatch } from './wire.ts';

const STATUSES = ['unconfigured', 'pending', 'failed', 'configured'] as const;
const component = z
  .object({
    id: z.string(),
    desired_config: z.string().nullish(),
    configuration_status: z.string().nullish(),
    enabled: z.boolean().nullish(),
    error_count: z.number().nullish(),
    tags: z.record(z.string(), z.string()).nullish(),
  })
  .passthrough();
const page = z
  .object({
    components: z.array(component),
    next: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();
const patched = z.object({ component_ids: z.array(z.string()).nullish() }).passthrough();

type Query = Record<string, string | number | boolean | undefined>;

function toComponent(c: z.infer<typeof component>): ConfigComponent {
  const s = c.configuration_status ?? '';
  // Anything CFS calls other than the four statuses is treated like `unconfigured` (BOS: not valid).
  const status: ConfigurationStatus = (STATUSES as readonly string[]).includes(s) ? (s as ConfigurationStatus) : 'unconfigured';
  return {
    id: c.id,
    desiredConfig: c.desired_config ?? '',
    configurationStatus: status,
    enabled: c.enabled ?? false,
    errorCount: c.error_count ?? 0,
    tags: c.tags ?? {},
  };
}

export class HttpConfig implements ConfigPort {
  constructor(private readonly http: ServiceClient) {}

  async getComponents(ids?: string[]): Promise<ConfigComponent[]> {
    if (ids === undefined) return this.pages({});
    return (await mapLimit(chunks(ids, CFS_GET_BATCH), CFS_GET_CONCURRENCY, (chunk) => this.pages({ ids: chunk.join(',') }))).flat();
  }

  private async pages(first: Query): Promise<ConfigComponent[]> {
    const out: ConfigComponent[] = [];
    let query: Query | undefined = first;
    while (query) {
      const r: HttpResponse<z.infer<typeof page>> = await this.http.request({
        endpoint: EP.cfsComponents,
        method: 'GET',
        path: '/v3/components',
        query,
        schema: page,
      });
      out.push(...r.data.components.map(toComponent));
      query = r.data.next ? nextQuery(r.data.next) : undefined;
    }
    return out;
  }

  async patchComponents(ids: string[], patch: ConfigPatch): Promise<string[]> {
    const out: string[] = [];
    for (const chunk of chunks(ids, CFS_PATCH_BATCH)) {
      const r = await this.http.request({
        endpoint: EP.cfsPatch,
        method: 'PATCH',
        path: '/v3/components',
        schema: patched,
        body: { patch: wirePatch(patch), filters: { ids: chunk.join(',') } },
      });
      out.push(...(r.data.component_ids ?? []));
    }
    return out;
  }

  async configurationExists(name: string): Promise<boolean> {
    const r = await this.http.request({
      endpoint: EP.cfsConfiguration,
      method: 'GET',
      path: `/v3/configurations/${encodeURIComponent(name)}`,
      accept: [404],
    });
    return r.status !== 404;
  }
}

/** CFS's `next` holds every original query arg; empty ones (null, '') mean "no filter" and are dropped. */
function nextQuery(next: Record<string, unknown>): Query {
  const q: Query = {};
  for (const [k, v] of Object.entries(next)) {
    if (v === null || v === undefined || v === '') continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') q[k] = v;
  }
  return q;
}
