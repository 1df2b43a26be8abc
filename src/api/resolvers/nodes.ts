/**
 * The standalone node inventory (schema/nodes.graphql): validate and seal through NodeRegistry, store
 * and kick the discovery operator in one transaction, shape rows without their secrets; hardware
 * discovery and re-inspection through NodeDiscovery.
 */
import { GraphQLError } from 'graphql';
import { deleteNode, listNodes, type NodeInventoryRow } from '../../db/node-inventory.ts';
import { transaction } from '../../db/tx.ts';
import { parseComponentId } from '../../domain/xname.ts';
import type { NodeRegistry } from '../../adapters/standalone/registry.ts';
import type { DiscoveryResult, NodeDiscovery } from '../../adapters/standalone/discovery.ts';
import type { BmcProblem as Problem } from '../../adapters/standalone/bmc.ts';
import { rowsLimitInventory } from '../../adapters/standalone/inventory.ts';
import { applyLimit, checkLimitSyntax } from '../../domain/limit.ts';
import { badInput, valueOrThrow } from '../errors.ts';
import type { ApiContext } from '../context.ts';
import type {
  BmcDriver,
  BmcProblem,
  DiscoveryAction,
  DiscoveryResult as GqlDiscoveryResult,
  InventoryNode,
  Resolvers,
} from '../generated/types.ts';

function registryOf(ctx: ApiContext): NodeRegistry {
  if (ctx.nodeRegistry) return ctx.nodeRegistry;
  throw new GraphQLError('bootorch keeps a node inventory only when it runs without CSM (BOOTORCH_ADAPTERS=standalone)', {
    extensions: { code: 'FAILED_PRECONDITION' },
  });
}

export function nodeView(r: NodeInventoryRow): InventoryNode {
  return {
    xname: r.id,
    hostname: r.hostname,
    mac: r.mac,
    arch: r.arch as InventoryNode['arch'],
    role: r.role,
    subRole: r.subRole,
    groups: r.groups,
    enabled: r.enabled,
    locked: r.locked,
    bmc: {
      driver: r.bmcDriver.toUpperCase() as BmcDriver,
      address: r.bmcAddress,
      username: r.bmcUsername,
      hasPassword: r.bmcSecret !== '',
    },
    bootParameters:
      r.bootKernel || r.bootInitrd || r.bootParams
        ? { kernel: r.bootKernel, initrd: r.bootInitrd, params: r.bootParams, setAt: r.bootSetAt }
        : null,
    hardware: r.hardware ?? null,
    inspectedAt: r.inspectedAt,
  };
}

function discoveryOf(ctx: ApiContext): NodeDiscovery {
  const d = registryOf(ctx).discovery;
  if (d) return d;
  throw new GraphQLError('discovery is not configured in this API process', { extensions: { code: 'FAILED_PRECONDITION' } });
}

/** Every problem a BMC call can have, as the schema's enum names it (a new one fails to compile until it is there). */
const PROBLEM: Record<Problem, BmcProblem> = {
  unreachable: 'UNREACHABLE',
  timeout: 'TIMEOUT',
  refused_login: 'REFUSED_LOGIN',
  unexpected_answer: 'UNEXPECTED_ANSWER',
  bmc_error: 'BMC_ERROR',
  local_resources: 'LOCAL_RESOURCES',
};

function resultView(r: DiscoveryResult): GqlDiscoveryResult {
  return {
    dryRun: r.dryRun,
    asked: r.asked,
    nodes: r.nodes.map((n) => ({
      address: n.address,
      bmcAddress: n.bmcAddress,
      xname: n.xname,
      action: n.action.toUpperCase() as DiscoveryAction,
      problem: n.action === 'refused' ? n.problem : null,
      changes: n.action === 'refused' ? [] : n.changes,
      hardware: n.system.hardware,
    })),
    failures: r.failures.map((f) => ({ ...f, problem: PROBLEM[f.problem] })),
  };
}

const xnameArg = (raw: string, field: string) => {
  const p = parseComponentId(raw);
  if ('error' in p) throw badInput([{ field, message: p.error }]);
  return p.id;
};

export const nodeResolvers: Resolvers = {
  Query: {
    nodes: async (_p, { xnames, limit }, ctx) => {
      registryOf(ctx);
      const ids = xnames?.map((x, i) => xnameArg(x, `xnames[${i}]`));
      const rows = await listNodes(ctx.db, ids);
      if (limit == null) return rows.map(nodeView);
      const problem = checkLimitSyntax(limit);
      if (problem) throw badInput([{ field: 'limit', message: problem }]);
      const chosen = applyLimit(new Set(rows.map((r) => r.id)), limit, rowsLimitInventory(rows));
      return rows.filter((r) => chosen.has(r.id)).map(nodeView);
    },
  },
  Mutation: {
    registerNodes: async (_p, { nodes }, ctx) => {
      const registry = registryOf(ctx);
      const drafts = nodes.map((n) =>
        Object.fromEntries(
          Object.entries({
            ...n,
            bmc: n.bmc
              ? Object.fromEntries(Object.entries({ ...n.bmc, driver: n.bmc.driver.toLowerCase() }).filter(([, v]) => v != null))
              : undefined,
          }).filter(([, v]) => v != null),
        ),
      );
      const rows = await transaction(ctx.db, async (tx) => {
        const stored = valueOrThrow(await registry.register(tx, drafts));
        await ctx.scheduler.kick(tx, ['discovery']);
        return stored;
      });
      return rows.map(nodeView);
    },
    discoverNodes: async (_p, { input }, ctx) => {
      const discovery = discoveryOf(ctx);
      const draft = Object.fromEntries(
        Object.entries({ ...input, scheme: input.scheme?.toLowerCase(), driver: input.driver?.toLowerCase() }).filter(([, v]) => v != null),
      );
      const r = valueOrThrow(await discovery.discover(ctx.db, draft));
      if (!r.dryRun) await ctx.scheduler.kick(ctx.db, ['discovery']);
      return resultView(r);
    },
    inspectNodes: async (_p, { xnames, dryRun }, ctx) => {
      const discovery = discoveryOf(ctx);
      const ids = (xnames ?? []).map((x, i) => xnameArg(x, `xnames[${i}]`));
      return resultView(valueOrThrow(await discovery.inspect(ctx.db, ids, dryRun ?? false)));
    },
    deleteNode: async (_p, { xname }, ctx) => {
      registryOf(ctx);
      return deleteNode(ctx.db, xnameArg(xname, 'xname'));
    },
  },
};
