/**
 * BSS client (csm-services §3): PUT bootparameters reads the BSS-Referral-Token header (a new UUID
 * per PUT); GET by name (200 names per call to keep URLs short; 404 = none of them known).
 */
import { z } from 'zod';
import { ServiceError } from '../errors.ts';
import { EP, chunks } from '../common.ts';
import type { ServiceClient } from '../http.ts';
import type { BootParameters, BootParamsPort } from '../ports.ts';

const NAMES_PER_GET = 200;
const entries = z
  .array(
    z
      .object({
        hosts: z.array(z.string()).nullish(),
        kernel: z.string().nullish(),
        initrd: z.string().nullish(),
        params: z.string().nullish(),
      })
      .passthrough(),
  )
  .nullable();

export class HttpBootParams implements BootParamsPort {
  constructor(private readonly http: ServiceClient) {}

  async setBootParameters(p: BootParameters): Promise<{ token: string }> {
    const r = await this.http.request({
      endpoint: EP.bssPut,
      method: 'PUT',
      path: '/boot/v1/bootparameters',
      body: { hosts: p.hosts, params: p.params, kernel: p.kernel, initrd: p.initrd },
    });
    const token = r.headers.get('bss-referral-token');
    if (!token) throw new ServiceError('bss', EP.bssPut, 'response has no BSS-Referral-Token header', r.status, false);
    return { token };
  }

  async getBootParameters(hosts: string[]): Promise<BootParameters[]> {
    const out: BootParameters[] = [];
    for (const chunk of chunks(hosts, NAMES_PER_GET)) {
      const r = await this.http.request({
        endpoint: EP.bssGet,
        method: 'GET',
        path: '/boot/v1/bootparameters',
        query: { name: chunk.join(',') },
        schema: entries,
        accept: [404],
      });
      if (r.status === 404) continue;
      for (const e of r.data ?? []) {
        out.push({ hosts: e.hosts ?? [], kernel: e.kernel ?? '', initrd: e.initrd ?? '', params: e.params ?? '' });
      }
    }
    return out;
  }
}
