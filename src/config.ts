/**
 * Environment, validated with zod. Every problem is reported at once, then the process exits:
 * an operator fixing a deployment at 3 a.m. should not discover the errors one restart at a time.
 */
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => ['true', '1', 'yes'].includes(v));

export const configSchema = z.object({
  /** Postgres URL. When unset, bootorch starts an embedded PostgreSQL under BOOTORCH_DATA_DIR. */
  DATABASE_URL: z.url().optional(),
  /** Folder for the embedded PostgreSQL's data (default `.data/pg` in the working directory). */
  BOOTORCH_DATA_DIR: z.string().min(1).default('.data'),
  /** Port of the embedded PostgreSQL (default 54329). */
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).default(54329),
  /** API listen port (default 4000; 0 picks a free port). */
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** API listen address (default 127.0.0.1). */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** pino log level (default info). */
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** Which adapters to use: `sim` (in-process simulated cluster) or `http` (real CSM services or `bootorch sim`). */
  BOOTORCH_ADAPTERS: z.enum(['sim', 'http']).default('sim'),
  /** Nodes in the in-process simulated cluster (dev / sim roles; default 256). */
  SIM_NODES: z.coerce.number().int().min(1).max(200_000).default(256),
  /** Seed of the simulated cluster (default 1). */
  SIM_SEED: z.coerce.number().int().default(1),
  /** Base URLs of the CSM services for BOOTORCH_ADAPTERS=http. */
  HSM_URL: z.url().optional(),
  PCS_URL: z.url().optional(),
  BSS_URL: z.url().optional(),
  CFS_URL: z.url().optional(),
  /**
   * S3 endpoint that image manifests (`s3://bucket/key`) are read from, path-style as `<S3_URL>/bucket/key`
   * (e.g. https://rgw-vip, or `bootorch sim`'s `<url>/s3`). Required to create templates with s3 paths.
   */
  S3_URL: z.url().optional(),
  /** Bearer token for the CSM services, or a file holding it (re-read on every request). */
  CSM_TOKEN: z.string().optional(),
  CSM_TOKEN_FILE: z.string().optional(),
  /** CA bundle (PEM) to trust for the CSM services. */
  CSM_CA_FILE: z.string().optional(),
  /** Offer permessage-deflate on the subscriptions' WebSocket (default false; see the README's Live section). */
  BOOTORCH_WS_DEFLATE: bool.default(false),
  /** Edge-triggered kicks on (default). Off gives the pure polling behaviour of BOS, for the benchmark baseline. */
  BOOTORCH_KICKS: bool.default(true),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  const message = `bootorch: invalid environment:\n${lines.join('\n')}`;
  throw new ConfigError(message);
}

export class ConfigError extends Error {}
