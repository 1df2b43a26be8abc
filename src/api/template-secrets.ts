/**
 * Write-only template fields, sealed at the moment a template is written (GraphQL and the BOS REST
 * door both come through putSessionTemplate / patchSessionTemplate): config-drive user data given in
 * the write is sealed with the server's BOOTORCH_SECRET_KEY; user data left out of the write is kept
 * from the stored boot set of the same name (a client that read the template, edited it and wrote
 * it back never saw the user data, so it cannot send it). Plaintext never reaches the database, and
 * a write that would need the key when the server has none is refused naming the field.
 */
import { sealUserData } from '../adapters/standalone/secrets.ts';
import type { ConfigDriveRecord } from '../domain/deploy.ts';
import type { BootSetRecord } from '../domain/templates.ts';
import { fail, ok, type Checked, type Issue } from '../domain/validation.ts';

export function sealTemplateSecrets(
  bootSets: Record<string, BootSetRecord>,
  stored: Record<string, BootSetRecord> | undefined,
  key: Buffer | undefined,
): Checked<Record<string, BootSetRecord>> {
  const errors: Issue[] = [];
  const out: Record<string, BootSetRecord> = {};
  for (const [name, b] of Object.entries(bootSets)) {
    const cd = b.deploy?.config_drive;
    if (!b.deploy || !cd) {
      out[name] = b;
      continue;
    }
    // Given in the write, else the stored one (sealed, or plaintext stored before sealing existed).
    const before = stored?.[name]?.deploy?.config_drive;
    const plain = cd.user_data !== undefined ? cd.user_data : before?.user_data;
    const sealed: ConfigDriveRecord = { meta_data: cd.meta_data };
    if (plain) {
      if (key) sealed.user_data_sealed = sealUserData(key, plain);
      else
        errors.push({
          field: `bootSets.${name}.deploy.configDrive.userData`,
          message: 'cannot be stored: the server has no BOOTORCH_SECRET_KEY to seal it with',
        });
    } else if (cd.user_data === undefined && before?.user_data_sealed) sealed.user_data_sealed = before.user_data_sealed;
    out[name] = { ...b, deploy: { ...b.deploy, config_drive: sealed } };
  }
  return errors.length ? fail(errors) : ok(out);
}
