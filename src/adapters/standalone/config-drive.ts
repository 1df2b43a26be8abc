/**
 * Disk deploys' config drive, as Ironic makes one: a small filesystem image the deploy agent writes
 * to a partition at the end of the node's disk after the image. bootorch builds it here from the boot
 * set's `config_drive` as a cloud-init NoCloud drive: a FAT filesystem labelled `cidata` holding
 * `user-data` and `meta-data` (when the boot set's meta-data is empty, `instance-id` and
 * `local-hostname` are the node's xname, as cloud-init needs an instance id), 64 KiB unless its
 * files need more. Built in this process with FatFs (fat-image.ts), no outside tool: about 0.5 ms a
 * drive.
 */
import type { Db } from '../../db/client.ts';
import { deployOf } from '../../db/deploys.ts';
import { appendEvents } from '../../db/events.ts';
import { issueTicket } from '../../db/boot-grants.ts';
import { newAttemptId, newTicket } from '../../auth/boot-tickets.ts';
import { AGENT_STATES, type ConfigDriveRecord } from '../../domain/deploy.ts';
import { fatImage } from './fat-image.ts';
import { openUserData, SecretKeyError } from './secrets.ts';

/**
 * The filesystem's sizes, KiB, smallest first: the first the files fit in is the drive's. 64 KiB (FAT12,
 * the least FatFs formats) holds the usual few KiB of cloud-init; in a PXE storm every drive is copied
 * and gzipped whole, so the smallest size is what 10,000 nodes cost. 256 KiB holds user-data and
 * meta-data of 64 KiB each with FAT's overhead; 65,536 characters of either (the fields' limit) can be
 * up to three times that in UTF-8, which 1 MiB holds.
 */
export const CONFIG_DRIVE_KIBS = [64, 128, 256, 512, 1024, 2048] as const;
export const CONFIG_DRIVE_LABEL = 'cidata';

/**
 * The NoCloud config drive image for a node (a FAT filesystem, no partition table). The only place
 * sealed user data is opened: with `secretKey` (BOOTORCH_SECRET_KEY); a SecretKeyError saying why when
 * there is none or it does not open. A drive stored before user data was sealed holds it as given.
 */
export async function buildConfigDrive(
  cd: ConfigDriveRecord,
  xname: string,
  secretKey: Buffer | undefined,
  more: Array<[string, string]> = [],
): Promise<Buffer> {
  let userData = cd.user_data ?? '';
  if (cd.user_data_sealed) {
    if (!secretKey)
      throw new SecretKeyError("cannot open the config drive's user data: BOOTORCH_SECRET_KEY is not set where bootorch's API runs");
    userData = openUserData(secretKey, cd.user_data_sealed);
  }
  // cloud-init looks for the label cidata or CIDATA.
  return fatImage(CONFIG_DRIVE_LABEL, CONFIG_DRIVE_KIBS, [
    ['user-data', userData],
    ['meta-data', cd.meta_data || `instance-id: ${xname}\nlocal-hostname: ${xname}\n`],
    ...more,
  ]);
}

export type ConfigDriveAnswer = { ok: true; image: Buffer } | { ok: false; status: 404 | 409 | 503; message: string };

/**
 * A node's config drive, for its deploy agent (GET /boot/v1/config-drive/<xname>, node credential):
 * only while its agent runs (starting..writing). A drive that cannot be built is recorded as an
 * error event (reason write_error) on the node, so the reason is in bootorch whatever the agent says.
 */
export interface NodeConfigDriveOptions {
  /** BOOTORCH_SECRET_KEY: opens the drive's sealed user data (without it such a drive is a 503). */
  secretKey?: Buffer;
  /** Lifetime of the installed system's ticket the drive carries, seconds (default 3600). */
  diskTicketTtlSeconds?: number;
  now?: () => Date;
}

/** The file on every drive holding the installed system's one-time ticket (api/boot/exchange.ts). */
export const DISK_TICKET_FILE = 'bootorch-ticket';

export async function nodeConfigDrive(db: Db, id: string, o: NodeConfigDriveOptions = {}): Promise<ConfigDriveAnswer> {
  const d = await deployOf(db, id);
  if (!d) return { ok: false, status: 404, message: `no disk deploy for ${id}` };
  if (!AGENT_STATES.includes(d.state)) return { ok: false, status: 409, message: `${id}'s deploy is ${d.state}, not being written` };
  try {
    // Every deploy gets a drive (user data or not): it carries the installed system's ticket, a new
    // one per drive built, exchangeable once bootorch has switched this deploy to its disk.
    const now = (o.now ?? (() => new Date()))();
    const { ticket, hash } = newTicket();
    const expiresAt = new Date(now.getTime() + (o.diskTicketTtlSeconds ?? 3600) * 1000);
    await issueTicket(db, id, 'disk', { hash, expiresAt, now, attempt: newAttemptId() });
    const cd = d.spec.config_drive ?? { meta_data: '' };
    return { ok: true, image: await buildConfigDrive(cd, id, o.secretKey, [[DISK_TICKET_FILE, `${ticket}\n`]]) };
  } catch (e) {
    const message = (e as Error).message;
    await appendEvents(db, [
      {
        componentId: id,
        session: d.session,
        sessionTenant: d.sessionTenant,
        kind: 'error',
        actor: 'api:config-drive',
        error: message,
        reason: 'write_error',
        data: { deploy: 'config_drive' },
      },
    ]);
    return { ok: false, status: 503, message };
  }
}
