/**
 * What `npm start` puts in a fresh database so a newcomer can boot something at once: example
 * templates for the simulated machine's compute and UAN nodes. Existing rows are left alone.
 */
import type { Logger } from 'pino';
import type { Connection } from './db/client.ts';
import type { SimWorld } from './sim/world.ts';

export async function seedDemo(conn: Connection, world: SimWorld, log: Logger): Promise<void> {
  const path = world.defaultImage.manifest;
  const templates: Array<[string, string, Record<string, unknown>]> = [
    ['compute', 'Compute nodes (x86) into the default image, configured with compute-cfg', {
      compute: { path, type: 's3', etag: '', arch: 'X86', kernel_parameters: 'console=ttyS0,115200 quiet',
        node_roles_groups: ['Compute'], rootfs_provider: 'sbps', rootfs_provider_passthrough: 'dvs:api-gw-service-nmn.local:300:nmn0' },
    }],
    ['uan', 'User access nodes', {
      uan: { path, type: 's3', etag: '', arch: 'X86', kernel_parameters: 'console=ttyS0,115200', node_roles_groups: ['Application_UAN'] },
    }],
  ];
  for (const [name, description, bootSets] of templates) {
    await conn.pool.query(
      `insert into session_templates (name, description, enable_cfs, cfs_configuration, boot_sets)
       values ($1, $2, true, $3, $4) on conflict do nothing`,
      [name, description, name === 'uan' ? 'uan-cfg' : 'compute-cfg', JSON.stringify(bootSets)],
    );
  }
  // Components exist from the start (discovery would add them within discovery_frequency anyway).
  await conn.pool.query(`insert into components (id, last_action, last_action_at)
    select unnest($1::text[]), 'newly_discovered', now() on conflict do nothing`, [world.ids()]);
  log.info({ templates: templates.map((t) => t[0]), nodes: world.ids().length }, 'demo data ready');
}
