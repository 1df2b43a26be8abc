/**
 * Disk deploys (Ironic's deploy, on bootorch's engine): a boot set may ask for an image to be written
 * to a node's disk by a deploy agent that runs from the boot set's ramdisk, after which the node boots
 * from its own disk. Here: the boot set field (checked with zod, stored in BOS's snake_case), the
 * states a deploy walks, and the disk choice by root device hints. Pure.
 */
import { z } from 'zod';
import { text } from './validation.ts';

export const IMAGE_FORMATS = ['raw', 'qcow2'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** A boot set's `deploy`, as stored (snake_case, as the rest of a stored boot set). */
export interface DeployRecord {
  image: { url: string; format: ImageFormat; checksum: string };
  root_device_hints?: RootDeviceHints;
  /** cloud-init NoCloud data, written beside the image on a vfat filesystem labelled cidata. */
  config_drive?: ConfigDriveRecord;
}

/**
 * A config drive as stored. User data is the place for a node's secrets (the installed system's
 * credential, keys), so it is write-only: the API seals it (adapters/standalone/secrets.ts) before it
 * is stored and only the config drive built for a deploying node opens it. Meta data is not sealed
 * (cloud-init's instance id and hostname) and is read back.
 */
export interface ConfigDriveRecord {
  meta_data: string;
  /** The sealed user data; absent: none. */
  user_data_sealed?: string;
  /**
   * Plaintext user data: a write's, until the API seals it (absent in a write: keep the stored one),
   * or one stored before user data was sealed (sealed at the template's next write).
   */
  user_data?: string;
}

/** Ironic's root device hints: every hint given must hold; none given = the first disk. */
export interface RootDeviceHints {
  /** Whole GiB (as Ironic's `size`). */
  size?: number;
  /** Kernel name, `vda` or `/dev/vda`. */
  name?: string;
  serial?: string;
}

type Maybe<T> = T | null | undefined;
/** The GraphQL input (camelCase; null = not given). */
export interface DeployDraft {
  image: { url: string; format?: Maybe<ImageFormat>; checksum: string };
  rootDeviceHints?: Maybe<{ size?: Maybe<number>; name?: Maybe<string>; serial?: Maybe<string> }>;
  configDrive?: Maybe<{ userData?: Maybe<string>; metaData?: Maybe<string> }>;
}

export const CHECKSUM_RE = /^sha256:[0-9a-f]{64}$/;

export const deploySchema = z
  .object({
    image: z.object({
      url: text(1, 4095).regex(/^(https?:\/\/\S+|[^\s:]+)$/, 'must be an http(s) URL or a path under the boot files folder'),
      format: z.enum(IMAGE_FORMATS).nullish(),
      checksum: text(1, 100).regex(CHECKSUM_RE, 'must be sha256: and 64 lowercase hex digits'),
    }),
    rootDeviceHints: z
      .object({
        size: z.number().int('must be a whole number of GiB').positive('must be more than 0').nullish(),
        name: text(1, 255)
          .regex(/^(\/dev\/)?[a-z][a-z0-9]*$/, 'must be a disk name such as vda or /dev/vda')
          .nullish(),
        serial: text(1, 255)
          .regex(/^[^\s"'\\]+$/, 'must not hold spaces or quotes')
          .nullish(),
      })
      .nullish(),
    configDrive: z.object({ userData: text(0, 65536).nullish(), metaData: text(0, 65536).nullish() }).nullish(),
  })
  .nullish();

export function deployRecord(d: DeployDraft): DeployRecord {
  const r: DeployRecord = { image: { url: d.image.url, format: d.image.format ?? 'raw', checksum: d.image.checksum } };
  const h = d.rootDeviceHints;
  if (h && (h.size != null || h.name != null || h.serial != null)) {
    r.root_device_hints = {};
    if (h.size != null) r.root_device_hints.size = h.size;
    if (h.name != null) r.root_device_hints.name = h.name.replace(/^\/dev\//, '');
    if (h.serial != null) r.root_device_hints.serial = h.serial;
  }
  const cd = d.configDrive;
  if (cd) {
    r.config_drive = { meta_data: cd.metaData ?? '' };
    // Left out: the write keeps the stored user data. null or "": none.
    if (cd.userData !== undefined) r.config_drive.user_data = cd.userData ?? '';
  }
  return r;
}

/** The stored deploy as a write's draft (PATCH merges into it): user data left out, so the stored one is kept. */
export function deployDraft(r: DeployRecord): DeployDraft {
  return {
    image: { ...r.image },
    rootDeviceHints: r.root_device_hints ? { ...r.root_device_hints } : null,
    configDrive: r.config_drive ? { metaData: r.config_drive.meta_data } : null,
  };
}

/** What a reader is shown of a config drive: whether it holds user data and how many bytes, never the data. */
export function configDriveView(cd: ConfigDriveRecord, sealedBytes: (sealed: string) => number) {
  const bytes = cd.user_data_sealed ? sealedBytes(cd.user_data_sealed) : Buffer.byteLength(cd.user_data ?? '');
  return { hasUserData: bytes > 0, userDataBytes: bytes, metaData: cd.meta_data };
}

/** What readers are shown of a config drive; a client sending back what it read sends these too. */
const CONFIG_DRIVE_READ_ONLY = new Set(['hasUserData', 'userDataBytes']);

/**
 * A deploy as BOS-style JSON (snake_case keys, as stored) or as the GraphQL input: the GraphQL input's
 * shape. The config drive's read-only fields (`has_user_data`, `user_data_bytes`) are dropped, so a
 * template read, edited and written back keeps its user data.
 */
export function deployInput(v: unknown): unknown {
  const input = camelKeys(v);
  const cd = (input as { configDrive?: unknown } | null)?.configDrive;
  if (cd && typeof cd === 'object' && !Array.isArray(cd)) {
    for (const k of CONFIG_DRIVE_READ_ONLY) delete (cd as Record<string, unknown>)[k];
  }
  return input;
}

function camelKeys(v: unknown): unknown {
  const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  if (Array.isArray(v)) return v.map(camelKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), camelKeys(x)]));
}

/**
 * Where a deploy is. The agent moves it through starting..written by heartbeats; bootorch moves it
 * to booting_disk when it has switched the boot device and power-cycled; the installed system's
 * first report makes it active. failed holds a DEPLOY_FAILURE reason.
 */
export const DEPLOY_STATES = [
  'pending',
  'starting',
  'downloading',
  'verifying',
  'writing',
  'written',
  'booting_disk',
  'active',
  'failed',
] as const;
export type DeployState = (typeof DEPLOY_STATES)[number];

/** States in which the agent runs and must heartbeat. */
export const AGENT_STATES: readonly DeployState[] = ['starting', 'downloading', 'verifying', 'writing'];

/** What an agent (or the installed system) may report, in the order a deploy walks them. */
export const HEARTBEAT_STATES = ['starting', 'downloading', 'verifying', 'writing', 'written', 'active', 'failed'] as const;
export type HeartbeatState = (typeof HEARTBEAT_STATES)[number];

/** The failure reasons an agent may give (a subset of domain/failures.ts). */
export const AGENT_FAILURES = ['checksum_mismatch', 'no_matching_disk', 'write_error', 'image_unreachable'] as const;
export type AgentFailure = (typeof AGENT_FAILURES)[number];

/**
 * Which heartbeats a deploy in `from` accepts. Agent states move forward only (a repeated
 * heartbeat is fine); `active` only after bootorch switched to disk; `failed` while the agent runs.
 */
export function heartbeatAllowed(from: DeployState, to: HeartbeatState): boolean {
  const order = HEARTBEAT_STATES.indexOf(to as HeartbeatState);
  if (to === 'active') return from === 'booting_disk' || from === 'active';
  if (to === 'failed') return from === 'pending' || AGENT_STATES.includes(from);
  if (from === 'pending') return true;
  if (!AGENT_STATES.includes(from) && from !== 'written') return false;
  return order >= HEARTBEAT_STATES.indexOf(from as HeartbeatState);
}

/**
 * Who sends a heartbeat: the deploy agent's credential (scope deploy), the installed system's (scope
 * disk, from the ticket in its config drive), or a credential that may send any state (an operator, a
 * node token an admin provisioned without a scope).
 */
export type HeartbeatSender = 'agent' | 'installed' | 'any';

/**
 * Whether this sender may send this state. The agent never says ACTIVE (bootorch decides it once the
 * installed system, switched to its disk by bootorch, reports with its own credential); the installed
 * system says nothing else.
 */
export function senderMaySend(sender: HeartbeatSender, to: HeartbeatState): boolean {
  if (sender === 'agent') return to !== 'active';
  if (sender === 'installed') return to === 'active';
  return true;
}

export interface Disk {
  /** Kernel name (vda). */
  name: string;
  sizeBytes: number;
  serial: string;
}

/** The disk the hints choose: the first (by name) that meets every hint given; undefined when none. */
export function matchDisk(disks: readonly Disk[], hints: RootDeviceHints | undefined): Disk | undefined {
  const h = hints ?? {};
  return [...disks]
    .sort((a, b) => a.name.localeCompare(b.name))
    .find(
      (d) =>
        (h.name === undefined || d.name === h.name) &&
        (h.serial === undefined || d.serial === h.serial) &&
        (h.size === undefined || Math.floor(d.sizeBytes / 2 ** 30) === h.size),
    );
}
