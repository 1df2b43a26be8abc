/** The deploy agent's heartbeat (schema/deploy.graphql): checked at the edge, decided in engine/deploy-heartbeat.ts. */
import { getOptions } from '../../db/options.ts';
import { visibleIds } from '../../db/tenants.ts';
import { deployHeartbeat } from '../../engine/deploy-heartbeat.ts';
import { checkComponentId } from '../../domain/components.ts';
import { check, text } from '../../domain/validation.ts';
import { badInput, valueOrThrow } from '../errors.ts';
import type { Resolvers } from '../generated/types.ts';

export const deployResolvers: Resolvers = {
  Mutation: {
    deployHeartbeat: async (_p, { id, state, reason, message }, ctx) => {
      if (message != null) valueOrThrow(check(text(0, 4096), message, 'message'));
      if (state === 'failed' && !reason) throw badInput([{ field: 'reason', message: 'is required when state is FAILED' }]);
      if (state !== 'failed' && reason) throw badInput([{ field: 'reason', message: 'is only given with state FAILED' }]);
      const canonical = checkComponentId(id);
      if (canonical.ok && ctx.tenant !== null && !(await visibleIds(ctx.db, ctx.tenant, [canonical.value])).has(canonical.value)) {
        return { __typename: 'ReportRefused', code: 'NOT_FOUND', message: `no component "${canonical.value}"` };
      }
      const options = await getOptions(ctx.db);
      const r = await deployHeartbeat(
        ctx.db,
        ctx.scheduler,
        { id, state, reason, message, actor: ctx.actor },
        { heartbeatTimeoutSeconds: options.deploy_heartbeat_timeout },
      );
      if (!r.ok) return { __typename: 'ReportRefused', code: r.code, message: r.message };
      const h = r.deploy.root_device_hints ?? {};
      return {
        __typename: 'DeployHeartbeatAccepted',
        state: r.state,
        imageUrl: r.deploy.image.url,
        imageFormat: r.deploy.image.format,
        imageChecksum: r.deploy.image.checksum,
        rootDeviceSize: h.size ?? null,
        rootDeviceName: h.name ?? null,
        rootDeviceSerial: h.serial ?? null,
        hasConfigDrive: !!r.deploy.config_drive,
        heartbeatIntervalSeconds: r.heartbeatIntervalSeconds,
      };
    },
  },
  DeployHeartbeatResult: {
    __resolveType: (o) => ('imageUrl' in o ? 'DeployHeartbeatAccepted' : 'ReportRefused'),
  },
};
