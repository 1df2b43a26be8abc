/**
 * The standalone node inventory (schema/nodes.graphql): validate and seal through NodeRegistry, store
 * and kick discovery in one transaction, shape rows without their secrets.
 */
import { GraphQLError } from 'graphql';
import { deleteNode, listNodes, type NodeInventoryRow } from '../../db/node-inventory.ts';
import { transaction } from '../../db/tx.ts';
import { parseComponentId } from '../../domain/xname.ts';
import type { NodeRegistry } from '../../adapters/standalone/registry.ts';
import { badInput, valueOrThrow } from '../errors.ts';
import type { ApiContext } from '../context.ts';
import type { BmcDriver, InventoryNode, Resolvers } from '../generated/types.ts';

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
  };
}

const xnameArg = (raw: string, field: string) => {
  const p = parseComponentId(raw);
  if ('error' in p) throw badInput([{ field, message: p.error }]);
  return p.id;
};

export const nodeResolvers: Resolvers = {
  Query: {
    nodes: async (_p, { xnames }, ctx) => {
      registryOf(ctx);
      const ids = xnames?.map((x, i) => xnameArg(x, `xnames[${i}]`));
      return (await listNodes(ctx.db, ids)).map(nodeView);
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
    deleteNode: async (_p, { xname }, ctx) => {
      registryOf(ctx);
      return deleteNode(ctx.db, xnameArg(xname, 'xname'));
    },
  },
};
