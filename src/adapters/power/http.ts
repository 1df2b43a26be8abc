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
            managementState: z.string().nullish(),
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
      for (const s of r.data.status ?? []) out.set(s.xname, pcsPower(s));
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

/**
 * One PCS power-status entry as the node's power. Only `on` and `off` are states: PCS's `undefined`
 * (its own poll could not reach the BMC, managementState `unavailable`) and an entry with an error
 * are unknown, with the cause: an xname PCS does not know ("Component not found in component map.",
 * "Invalid component name.", no power data) is not_in_inventory, any other error bmc_error.
 */
export function pcsPower(s: {
  xname: string;
  powerState?: string | null;
  managementState?: string | null;
  error?: string | null;
}): PowerState {
  const state = (s.powerState ?? '').toLowerCase();
  if (s.error) {
    const unknownToPcs = /not found|invalid component|can not have power state/i.test(s.error);
    return { state: 'unknown', cause: unknownToPcs ? 'not_in_inventory' : 'bmc_error', error: `PCS: ${s.error}` };
  }
  if (state === 'on' || state === 'off') return { state, error: '' };
  return {
    state: 'unknown',
    cause: 'bmc_unreachable',
    error: `PCS reports powerState ${state || '(none)'}${s.managementState ? `, managementState ${s.managementState}` : ''} for ${s.xname}: PCS cannot reach its BMC`,
  };
}
