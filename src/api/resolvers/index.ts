/** Every area's resolvers, merged type by type, plus the DateTime scalar and the enum mappings. */
import { Codes, DateTime } from '../scalars.ts';
import { enumValues } from '../enums.ts';
import { subscriptionResolvers } from '../subscriptions.ts';
import type { Resolvers } from '../generated/types.ts';
import { componentResolvers } from './components.ts';
import { optionResolvers } from './options.ts';
import { sessionResolvers } from './sessions.ts';
import { systemResolvers } from './system.ts';
import { templateResolvers } from './templates.ts';
import { authResolvers } from './auth.ts';
import { explainResolvers } from './explain.ts';
import { nodeResolvers } from './nodes.ts';
import { deployResolvers } from './deploys.ts';
import { consoleResolvers } from './consoles.ts';
import { approvalResolvers } from './approval.ts';
import { quarantineResolvers } from './quarantine.ts';

export function allResolvers(): Resolvers {
  const parts: Record<string, unknown>[] = [
    { DateTime, Codes, ...enumValues },
    systemResolvers,
    templateResolvers,
    sessionResolvers,
    componentResolvers,
    optionResolvers,
    subscriptionResolvers,
    explainResolvers,
    authResolvers,
    nodeResolvers,
    deployResolvers,
    consoleResolvers,
    approvalResolvers,
    quarantineResolvers,
  ];
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [type, fields] of Object.entries(part)) {
      // Scalars are class instances and stay whole; object types merge field by field.
      const plain = fields && Object.getPrototypeOf(fields) === Object.prototype;
      out[type] = plain ? { ...(out[type] as object | undefined), ...(fields as object) } : fields;
    }
  }
  return out as Resolvers;
}
