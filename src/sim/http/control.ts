/**
 * The simulator's own routes, next to the services it imitates (not part of any CSM API, never
 * counted as service calls, never subject to the fault knobs):
 *
 *   GET  /healthz        {"ok": true}
 *   GET  /sim/info       node count, seed, the default image manifest, group names
 *   GET  /sim/counters   power transitions requested per operation and node, calls per endpoint,
 *                        node reports delivered and refused, the most requests the BMCs had at once
 *                        (all, and one node's) and how many it answered 429/503; standalone nodes'
 *                        network boots (boot scripts, local boots, exchanges, config drives, retries)
 *   GET  /sim/reports    the reports bootorch acknowledged, in order: {"first": seq, "reports": [{seq, id,
 *                        token, at}]}; `?after=N` only those after the N-th (at least the last 100,000 kept)
 *   GET  /sim/faults     the fault knobs now
 *   POST /sim/faults     change them: {"services": {"pcs": {"down": true}}, "nodes": {"ignoresSoftOff": [xnames]},
 *                        "rates": {"neverPowersOn": 0.01}, "clear": true}   (clear first, then the rest);
 *                        the BMC faults (bmcDead, bmcRefuses, bmcSlow, bmcBusy) are node faults, and
 *                        "bmc": {"slowMs": 10000, "busyStatus": 429, "retryAfter": 2, "busyRate": 0.5} says how they behave
 *
 * Tests and operators flip faults in a running `bootorch sim` with these, and read what the
 * hardware saw ("one graceful off and one on per node") from another process.
 */
import { z } from 'zod';
import { NODE_FAULTS, SIM_SERVICES, type NodeFault, type SimService } from '../types.ts';
import type { SimWorld } from '../world.ts';
import { json, problem, type Reply } from './router.ts';

const serviceFault = z
  .object({
    down: z.boolean().optional(),
    failRate: z.number().min(0).max(1).optional(),
    slowMs: z.number().int().min(0).optional(),
    timeout: z.boolean().optional(),
  })
  .strict();

const faultsBody = z
  .object({
    clear: z.boolean().optional(),
    services: z.partialRecord(z.enum(SIM_SERVICES), serviceFault).optional(),
    nodes: z.partialRecord(z.enum(NODE_FAULTS), z.array(z.string())).optional(),
    rates: z.partialRecord(z.enum(NODE_FAULTS), z.number().min(0).max(1)).optional(),
    bmc: z
      .object({
        slowMs: z.number().int().min(0).optional(),
        busyStatus: z.union([z.literal(429), z.literal(503)]).optional(),
        retryAfter: z.number().int().min(0).max(86_400).optional(),
        busyRate: z.number().min(0).max(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type SimFaultsChange = z.infer<typeof faultsBody>;

/** Reports delivered / refused by the simulated nodes' reporters, counted by the server. */
export interface ReportCounts {
  delivered: number;
  refused: number;
  /** The delivered ones, oldest first (kept by the server whose nodes report; a BMC listener has none). */
  acknowledged?: AcknowledgedReport[];
}

/** A report bootorch acknowledged (a 2xx answer with its result): the seq-th delivered, of node `id` booted with `token`, at `at` (ms). */
export interface AcknowledgedReport {
  seq: number;
  id: string;
  token: string;
  at: number;
}

/** Acknowledged reports kept for GET /sim/reports (a test reads a session's worth; a long bench run must not grow without end). */
const ACKNOWLEDGED_KEPT = 100_000;

/** Count a delivered report and keep it (the oldest dropped past ACKNOWLEDGED_KEPT, a chunk at a time). */
export function recordDelivered(reports: ReportCounts, id: string, token: string): void {
  reports.delivered++;
  const kept = reports.acknowledged;
  if (!kept) return;
  kept.push({ seq: reports.delivered, id, token, at: Date.now() });
  if (kept.length >= 2 * ACKNOWLEDGED_KEPT) kept.splice(0, kept.length - ACKNOWLEDGED_KEPT);
}

function faultsView(world: SimWorld) {
  const services: Partial<Record<SimService, unknown>> = {};
  for (const s of SIM_SERVICES) services[s] = world.faults.service(s);
  const nodes: Partial<Record<NodeFault, string[]>> = {};
  for (const f of NODE_FAULTS) {
    const ids = world.faults.nodesWith(f);
    if (ids.length) nodes[f] = ids;
  }
  return { services, nodes, bmc: world.faults.bmc() };
}

/** Apply a change to the world's fault knobs (also used by `bootorch sim --fault`). */
export function applyFaults(world: SimWorld, c: SimFaultsChange): void {
  if (c.clear) world.faults.clear();
  for (const [s, f] of Object.entries(c.services ?? {})) world.faults.setService(s as SimService, f!);
  for (const [f, ids] of Object.entries(c.nodes ?? {})) world.faults.setNodes(f as NodeFault, ids!);
  for (const [f, r] of Object.entries(c.rates ?? {})) world.faults.setRate(f as NodeFault, r!);
  if (c.bmc) world.faults.setBmc(Object.fromEntries(Object.entries(c.bmc).filter(([, v]) => v !== undefined)));
}

/** The answer to a control request, or undefined when the path is not one (then the services route it). */
export function controlRoute(
  world: SimWorld,
  reports: ReportCounts,
  method: string,
  path: string,
  raw: string,
  query = new URLSearchParams(),
): Reply | undefined {
  if (path === '/healthz' && method === 'GET') return json(200, { ok: true });
  if (!path.startsWith('/sim/')) return undefined;
  switch (`${method} ${path.replace(/\/+$/, '')}`) {
    case 'GET /sim/info':
      return json(200, {
        nodes: world.nodes.size,
        seed: world.seed,
        defaultImage: { id: world.defaultImage.id, manifest: world.defaultImage.manifest, arch: world.defaultImage.arch },
        groups: [...world.groups.keys()],
      });
    case 'GET /sim/counters': {
      const transitions: Record<string, Record<string, number>> = {};
      for (const [op, m] of world.counters.transitions) transitions[op] = Object.fromEntries(m);
      const { bmcMax, bmcMaxPerNode } = world.counters;
      return json(200, {
        transitions,
        calls: Object.fromEntries(world.counters.calls),
        reports: { delivered: reports.delivered, refused: reports.refused },
        bmc: { maxInFlight: bmcMax, maxInFlightPerNode: bmcMaxPerNode, busyAnswers: world.counters.bmcBusyAnswers },
        pxe: { ...world.counters.pxe },
      });
    }
    case 'GET /sim/reports': {
      const kept = reports.acknowledged;
      if (!kept) return problem(404, 'no reports are sent from here');
      const after = Number(query.get('after') ?? 0);
      if (!Number.isInteger(after) || after < 0) return problem(400, 'after: a count of reports (a whole number, 0 or more)');
      return json(200, { first: kept[0]?.seq ?? reports.delivered + 1, reports: kept.filter((r) => r.seq > after) });
    }
    case 'GET /sim/faults':
      return json(200, faultsView(world));
    case 'POST /sim/faults': {
      let body: unknown;
      try {
        body = raw.trim() ? JSON.parse(raw) : {};
      } catch {
        return problem(400, 'body is not JSON');
      }
      const parsed = faultsBody.safeParse(body);
      if (!parsed.success) {
        const i = parsed.error.issues[0]!;
        return problem(400, `${i.path.join('.') || '(body)'}: ${i.message}`);
      }
      applyFaults(world, parsed.data);
      return json(200, faultsView(world));
    }
    default:
      return problem(
        404,
        `no simulator route ${method} ${path} (GET /sim/info, GET /sim/counters, GET /sim/reports, GET|POST /sim/faults)`,
      );
  }
}
