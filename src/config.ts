/**
 * Environment, validated with zod. Every problem is reported at once, then the process exits:
 * an operator fixing a deployment at 3 a.m. should not discover the errors one restart at a time.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseOriginList } from './adapters/outbound-policy.ts';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => ['true', '1', 'yes'].includes(v));

const envSchema = z.object({
  /** Postgres URL. When unset, bootorch starts an embedded PostgreSQL under BOOTORCH_DATA_DIR. */
  DATABASE_URL: z.url().optional(),
  /**
   * PostgreSQL URL for what needs a session of its own (LISTEN, session advisory locks), when
   * DATABASE_URL is a pooler in transaction mode (PgBouncer): the database itself, or a session-mode
   * pool. Default: DATABASE_URL.
   */
  DATABASE_SESSION_URL: z.url().optional(),
  /**
   * Named prepared statements on the report path (planned once per connection). false: unnamed ones,
   * for a transaction-mode pooler that does not track them (PgBouncer before 1.21, or without
   * max_prepared_statements).
   */
  BOOTORCH_NAMED_STATEMENTS: bool.default(true),
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
  /**
   * Which adapters to use: `sim` (in-process simulated cluster), `http` (real CSM services or
   * `bootorch sim`), or `standalone` (bootorch's own inventory, IPMI/Redfish power, iPXE boot scripts).
   */
  BOOTORCH_ADAPTERS: z.enum(['sim', 'http', 'standalone']).default('sim'),
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
  /**
   * Origins that image manifests and boot-parameters objects at http(s) URLs operators write may be
   * read from, comma-separated (`https://images.example.com,http://10.1.0.5:8080`), besides S3_URL's
   * (always allowed). A named origin may be at any address; `*` (or `https://*`) allows every other
   * origin at public addresses only (never loopback, link-local, metadata or private ranges).
   * Default: none (S3_URL's origin alone). Only S3_URL's origin gets the CSM token. See docs/outbound.md.
   */
  BOOTORCH_IMAGE_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseOriginList(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    }),
  /** Bearer token for the CSM services, or a file holding it (re-read on every request). */
  CSM_TOKEN: z.string().optional(),
  CSM_TOKEN_FILE: z.string().optional(),
  /** CA bundle (PEM) to trust for the CSM services. */
  CSM_CA_FILE: z.string().optional(),
  /**
   * Serve the API (GraphQL, graphql-ws and the BOS v2 REST door) over HTTPS with this certificate chain
   * (PEM) and key (PEM); both or neither. Unset: plain HTTP (a gateway in front terminates TLS).
   */
  BOOTORCH_TLS_CERT_FILE: z.string().min(1).optional(),
  BOOTORCH_TLS_KEY_FILE: z.string().min(1).optional(),
  /** Key sealing BMC passwords and config-drive user data (32 bytes, base64 or hex), or a file holding it. */
  BOOTORCH_SECRET_KEY: z.string().optional(),
  BOOTORCH_SECRET_KEY_FILE: z.string().optional(),
  /** Standalone: the API's base URL as nodes reach it (boot scripts and reports), e.g. http://10.1.0.1:4000. Default: the listen address. */
  BOOTORCH_BOOT_URL: z.url().optional(),
  /** Standalone: folder served at /boot/v1/files (manifests, kernels, initrds). */
  BOOTORCH_BOOT_FILES: z.string().optional(),
  /** Standalone: folder of configuration hooks (`<dir>/<configuration name>`, run with the node ids). */
  BOOTORCH_CONFIG_HOOKS: z.string().optional(),
  /** Standalone: the ipmitool binary (default `ipmitool`) and the deadline of one BMC call (default 15 s). */
  BOOTORCH_IPMITOOL: z.string().min(1).default('ipmitool'),
  BOOTORCH_BMC_TIMEOUT: z.coerce.number().positive().default(15),
  /**
   * Standalone: how IPMI calls run: `shell` (default), a long-lived `ipmitool shell` per BMC and user, or
   * `process`, one ipmitool process per call (for a BMC that does not get on with a long session).
   */
  BOOTORCH_IPMI_MODE: z.enum(['shell', 'process']).default('shell'),
  /** Standalone, IPMI shells: a shell idle this long is closed, freeing its BMC session, seconds (default 30). */
  BOOTORCH_IPMI_SHELL_IDLE: z.coerce.number().positive().max(3600).default(30),
  /** Standalone, IPMI shells: shells open at most per process (default 128, about 7 MB of memory each); past it the least recently used idle one closes. */
  BOOTORCH_IPMI_SHELLS: z.coerce.number().int().min(1).max(100_000).default(128),
  /** Standalone: BMC calls in flight at once over every BMC, per process (default 64; one per BMC at most in any case). */
  BOOTORCH_BMC_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(64),
  /** Standalone: failures in a row (unreachable, timeout, 5xx) that open a BMC's circuit: its calls then fail at once (default 3). */
  BOOTORCH_BMC_CIRCUIT_FAILURES: z.coerce.number().int().min(1).max(1000).default(3),
  /** Standalone: the longest an open BMC circuit waits before its next probe, seconds (default 60; the first wait is 5 s, doubling). */
  BOOTORCH_BMC_CIRCUIT_MAX_OPEN: z.coerce.number().positive().max(86_400).default(60),
  /**
   * Standalone: the longest a status pass waits for the BMCs' power reads, seconds (default 2); it does not
   * wait for a BMC whose last read took longer, and once all but 5 % have answered it gives the rest only
   * as long again. A node not waited for is "still asking" in that pass (pending: nothing is decided); its read goes on.
   */
  BOOTORCH_BMC_PASS_WAIT: z.coerce.number().positive().max(3600).default(2),
  /**
   * Standalone: idle Redfish connections kept at most over every BMC, per process (default: half the
   * process's open-file limit, at most 50,000); past it a call's connection is closed when it ends.
   */
  BOOTORCH_BMC_KEEP_CONNECTIONS: z.coerce.number().int().min(0).max(1_000_000).optional(),
  /** Standalone: CA bundle (PEM) Redfish BMC certificates are checked against. */
  BOOTORCH_BMC_CA_FILE: z.string().optional(),
  /**
   * Standalone: lifetime of a node credential exchanged for a boot ticket (the reporter's, the deploy
   * agent's, the installed system's), and of the installed system's ticket in a config drive; a disk
   * deploy must be written within it (default 3600 s).
   */
  BOOTORCH_BOOT_TOKEN_TTL: z.coerce.number().int().positive().default(3600),
  /**
   * Standalone: a node's boot window, seconds after bootorch powers it on (default 1800): only then does
   * its boot script carry a one-time ticket (and is iPXE's failure report taken). Cover the power-on
   * wait and the boot wait (max_power_on_wait_time + max_boot_wait_time).
   */
  BOOTORCH_BOOT_WINDOW: z.coerce.number().int().positive().default(1800),
  /** Standalone: lifetime of a boot script's one-time ticket, seconds (default 600); a later fetch in the window mints a new one. */
  BOOTORCH_BOOT_TICKET_TTL: z.coerce.number().int().positive().default(600),
  /**
   * Standalone: /boot/v1 requests per second and burst, per source address (default 20 and 40) and for
   * all sources together (default 5,000 and 20,000: a PXE storm of 10,000 nodes in 10 s passes with
   * their exchanges and config drives, 30,000 requests); beyond, 429 with Retry-After. Per API process.
   */
  BOOTORCH_BOOT_RATE_PER_SOURCE: z.coerce.number().positive().default(20),
  BOOTORCH_BOOT_BURST_PER_SOURCE: z.coerce.number().int().positive().default(40),
  BOOTORCH_BOOT_RATE_TOTAL: z.coerce.number().positive().default(5000),
  BOOTORCH_BOOT_BURST_TOTAL: z.coerce.number().int().positive().default(20000),
  /** Offer permessage-deflate on the subscriptions' WebSocket (default false; docs/architecture.md, "Live updates"). */
  BOOTORCH_WS_DEFLATE: bool.default(false),
  /**
   * Serve /metrics without a credential on this port too (on BOOTORCH_METRICS_HOST), e.g. for a
   * Prometheus on a management network. Unset: /metrics only on the API port, to a credential of role
   * viewer or above.
   */
  BOOTORCH_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Listen address of BOOTORCH_METRICS_PORT (default 127.0.0.1). */
  BOOTORCH_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Which proxies' X-Forwarded-For to believe for the client address that anonymous rate limits key
   * on (express `trust proxy`): `true`, a hop count, or comma-separated addresses/CIDRs/`loopback`,
   * `uniquelocal`... Default: none (the socket's peer address).
   */
  BOOTORCH_TRUST_PROXY: z
    .string()
    .optional()
    .transform((v) => {
      if (v === undefined || v === '' || v === 'false') return undefined;
      if (v === 'true') return true;
      if (/^\d+$/.test(v)) return Number(v);
      return v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    }),
});

export const configSchema = envSchema.superRefine((c, ctx) => {
  if (!c.BOOTORCH_TLS_CERT_FILE !== !c.BOOTORCH_TLS_KEY_FILE) {
    ctx.addIssue({
      code: 'custom',
      path: [c.BOOTORCH_TLS_CERT_FILE ? 'BOOTORCH_TLS_KEY_FILE' : 'BOOTORCH_TLS_CERT_FILE'],
      message: 'BOOTORCH_TLS_CERT_FILE and BOOTORCH_TLS_KEY_FILE go together',
    });
  }
});

export type Config = z.infer<typeof configSchema>;

/** The API's certificate and key from BOOTORCH_TLS_*_FILE, read once at start; a missing file stops the process with the reason. */
export function tlsFromConfig(
  c: Pick<Config, 'BOOTORCH_TLS_CERT_FILE' | 'BOOTORCH_TLS_KEY_FILE'>,
): { cert: Buffer; key: Buffer } | undefined {
  if (!c.BOOTORCH_TLS_CERT_FILE || !c.BOOTORCH_TLS_KEY_FILE) return undefined;
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new ConfigError(`bootorch: ${name}: cannot read ${file}: ${(e as Error).message}`);
    }
  };
  return { cert: read('BOOTORCH_TLS_CERT_FILE', c.BOOTORCH_TLS_CERT_FILE), key: read('BOOTORCH_TLS_KEY_FILE', c.BOOTORCH_TLS_KEY_FILE) };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  const message = `bootorch: invalid environment:\n${lines.join('\n')}`;
  throw new ConfigError(message);
}

export class ConfigError extends Error {}
