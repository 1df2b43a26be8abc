/** Version and health. */
import fs from 'node:fs';
import { databaseHealthy } from '../../db/client.ts';
import type { ApiContext } from '../context.ts';
import type { HealthState, Resolvers } from '../generated/types.ts';

const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION = pkg.version;

export function versionInfo() {
  const [major = 0, minor = 0, patch = 0] = VERSION.split(/[.-]/).map((x) => Number(x) || 0);
  return { version: VERSION, major, minor, patch };
}

/** Never throws: a failed probe reads as not available. */
export async function health(
  ctx: Pick<ApiContext, 'db' | 'queueHealthy'>,
): Promise<{ api: HealthState; database: HealthState; queue: HealthState }> {
  const [database, queue] = await Promise.all([
    databaseHealthy(ctx.db),
    ctx.queueHealthy ? ctx.queueHealthy().catch(() => false) : Promise.resolve(undefined),
  ]);
  const state = (v: boolean | undefined): HealthState => (v === undefined ? 'unknown' : v ? 'ok' : 'not_available');
  return { api: 'ok', database: state(database), queue: state(queue) };
}

export const systemResolvers: Resolvers = {
  Query: {
    version: () => versionInfo(),
    health: (_p, _a, ctx) => health(ctx),
  },
};
