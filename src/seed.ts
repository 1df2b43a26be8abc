/**
 * What `npm start` puts in a fresh database so a newcomer can boot something at once: example
 * templates for the simulated machine's compute and UAN nodes. Existing rows are left alone.
 */
import type { Logger } from 'pino';
import type { Connection } from './db/client.ts';
import { getTemplate, upsertTemplate } from './db/templates.ts';
import { insertDiscovered } from './db/components/actions.ts';
import type { BootSetRecord } from './domain/templates.ts';
import type { SimWorld } from './sim/world.ts';

export async function seedDemo(conn: Connection, world: SimWorld, log: Logger): Promise<void> {
  const path = world.defaultImage.manifest;
  const templates: Array<[string, string, Record<string, unknown>]> = [
    [
      'compute',
      'Compute nodes (x86) into the default image, configured with compute-cfg',
      {
        compute: {
          path,
          type: 's3',
          etag: '',
          arch: 'X86',
          kernel_parameters: 'console=ttyS0,115200 quiet',
          node_roles_groups: ['Compute'],
          rootfs_provider: 'sbps',
          rootfs_provider_passthrough: 'dvs:api-gw-service-nmn.local:300:nmn0',
        },
      },
    ],
    [
      'uan',
      'User access nodes',
      {
        uan: { path, type: 's3', etag: '', arch: 'X86', kernel_parameters: 'console=ttyS0,115200', node_roles_groups: ['Application_UAN'] },
      },
    ],
  ];
  for (const [name, description, bootSets] of templates) {
    if (await getTemplate(conn.db, '', name)) continue;
    await upsertTemplate(conn.db, '', {
      name,
      tenant: null,
      description,
      enableCfs: true,
      cfs: { configuration: name === 'uan' ? 'uan-cfg' : 'compute-cfg' },
      bootSets: bootSets as Record<string, BootSetRecord>,
      rollout: null,
    });
  }
  // Components exist from the start (discovery would add them within discovery_frequency anyway).
  await insertDiscovered(conn.db, world.ids(), 'seed');
  log.info({ templates: templates.map((t) => t[0]), nodes: world.ids().length }, 'demo data ready');
}
