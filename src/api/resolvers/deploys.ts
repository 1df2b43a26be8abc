/** The deploy agent's heartbeat (schema/deploy.graphql): checked at the edge, decided in engine/deploy-heartbeat.ts. */
import { getOptions } from '../../db/options.ts';
import { visibleIds } from '../../db/tenants.ts';
import { deployHeartbeat } from '../../engine/deploy-heartbeat.ts';
import { checkComponentId } from '../../domain/components.ts';
import { check, text } from '../../domain/validation.ts';
import { CHECKSUM_RE } from '../../domain/deploy.ts';
import { authzError } from '../../auth/errors.ts';
import { heartbeatSender } from '../../auth/node-scopes.ts';
import { badInput, valueOrThrow } from '../errors.ts';
import type { Resolvers } from '../generated/types.ts';

export const deployResolvers: Resolvers = {
  Mutation: {
    deployHeartbeat: async (_p, { id, state, reason, message, checksum }, ctx) => {
      if (message != null) valueOrThrow(check(text(0, 4096), message, 'message'));
      if (state === 'written' && !checksum)
        throw badInput([{ field: 'checksum', message: 'is required when state is WRITTEN: the sha256 of what was written' }]);
      if (checksum != null && !CHECKSUM_RE.test(checksum))
        throw badInput([{ field: 'checksum', message: 'must be sha256: and 64 lowercase hex digits' }]);
      if (state === 'failed' && !reason) throw badInput([{ field: 'reason', message: 'is required when state is FAILED' }]);
      if (state !== 'failed' && reason) throw badInput([{ field: 'reason', message: 'is only given with state FAILED' }]);
      const canonical = checkComponentId(id);
      if (canonical.ok && ctx.tenant !== null && !(await visibleIds(ctx.db, ctx.tenant, [canonical.value])).has(canonical.value)) {
        return { __typename: 'ReportRefused', code: 'NOT_FOUND', message: `no component "${canonical.value}"` };
      }
      // Which states this credential may send: a scoped node credential says only its own (domain/deploy.ts).
      const sender = heartbeatSender(ctx.auth?.principal);
      const options = await getOptions(ctx.db);
      const r = await deployHeartbeat(
        ctx.db,
        ctx.scheduler,
        { id, state, reason, message, checksum, actor: ctx.actor, sender },
        { heartbeatTimeoutSeconds: options.deploy_heartbeat_timeout },
      );
      if (!r.ok) {
        if (r.code === 'FORBIDDEN') throw authzError({ ok: false, code: 'FORBIDDEN', reason: r.message });
        return { __typename: 'ReportRefused', code: r.code, message: r.message };
      }
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
