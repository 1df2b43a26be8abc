/**
 * PCS client (csm-services §2): POST /transitions (answered 200 at once, work in the background)
 * and POST /power-status, one call per chunk of max_component_batch_size. Operations go out in the
 * lowercase form the contract's request enum lists (PCS is case-insensitive).
 */
import { z } from 'zod';
import { EP, chunks, type SettingsRef } from '../common.ts';
import type { ServiceClient } from '../http.ts';
import type { PowerOperation, PowerPort, PowerState, TransitionStatus } from '../ports.ts';

const started = z.object({ transitionID: z.string(), operation: z.string().optional() }).passthrough();
const record = z
  .object({
    transitionID: z.string(),
    operation: z.string(),
    transitionStatus: z.string(),
    tasks: z.array(z.object({ xname: z.string(), taskStatus: z.string(), error: z.string().nullish() }).passthrough()).nullish(),
  })
  .passthrough();
const status = z
  .object({
    status: z
      .array(
        z
          .object({
            xname: z.string(),
            powerState: z.string().nullish(),
            error: z.string().nullish(),
          })
          .passthrough(),
      )
      .nullish(),
  })
  .passthrough();

export class HttpPower implements PowerPort {
  constructor(
    private readonly http: ServiceClient,
    private readonly settings: SettingsRef,
  ) {}

  async powerStatus(ids: string[]): Promise<Map<string, PowerState>> {
    const out = new Map<string, PowerState>();
    for (const chunk of chunks(ids, this.settings.current.maxBatchSize)) {
      const r = await this.http.request({
        endpoint: EP.pcsPowerStatus,
        method: 'POST',
        path: '/power-status',
        body: { xname: chunk },
        schema: status,
      });
      for (const s of r.data.status ?? []) {
        const error = s.error ?? '';
        out.set(s.xname, { state: error ? '' : (s.powerState ?? '').toLowerCase(), error });
      }
    }
    return out;
  }

  async transition(operation: PowerOperation, ids: string[], taskDeadlineMinutes = 1): Promise<string[]> {
    const out: string[] = [];
    for (const chunk of chunks(ids, this.settings.current.maxBatchSize)) {
      const r = await this.http.request({
        endpoint: EP.pcsTransitions,
        method: 'POST',
        path: '/transitions',
        schema: started,
        body: { operation: operation.toLowerCase(), taskDeadlineMinutes, location: chunk.map((xname) => ({ xname })) },
      });
      out.push(r.data.transitionID);
    }
    return out;
  }

  async getTransition(id: string): Promise<TransitionStatus | undefined> {
    const r = await this.http.request({
      endpoint: EP.pcsTransition,
      method: 'GET',
      path: `/transitions/${encodeURIComponent(id)}`,
      schema: record,
      accept: [404],
    });
    if (r.status === 404) return undefined;
    const t = r.data;
    return {
      id: t.transitionID,
      operation: t.operation,
      status: t.transitionStatus,
      tasks: (t.tasks ?? []).map((k) => ({ xname: k.xname, status: k.taskStatus, error: k.error ?? '' })),
    };
  }
}
