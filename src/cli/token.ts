/**
 * `bootorch token ...`: token administration straight on the database, for sites without an identity
 * provider. The first admin token cannot come from the API (the API wants one), so this works on
 * DATABASE_URL, else on the embedded PostgreSQL under BOOTORCH_DATA_DIR (the running one if `bootorch
 * dev` has it up, else started for the command). Whoever can run it can read the database anyway.
 *
 *   bootorch token create --role admin --subject alice [--tenant T] [--ttl SECONDS]
 *   bootorch token node x3000c0s19b1n0 [--out /path/on/node/token]   (a node reporter's credential)
 *   bootorch token nodes --from-hsm URL|--registered --out DIR   (one for every node: src/cli/node-tokens.ts)
 *   bootorch token list [--all]
 *   bootorch token revoke <id>
 *
 * `create` and `node` print only the token on stdout (so `$(bootorch token create ...)` works) and
 * what was issued on stderr.
 */
import { chmod, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { connect, type Connection } from '../db/client.ts';
import { embeddedUrl, isListening, type EmbeddedServer } from '../db/embedded.ts';
import type { Config } from '../config.ts';
import { createApiToken, createNodeToken, listApiTokens, revokeApiToken, type ApiTokenInfo } from '../auth/index.ts';
import { tenantExists } from '../db/tenants.ts';
import { registerNodeTokensCommand } from './node-tokens.ts';

const HUMAN_ROLES = ['admin', 'operator', 'viewer'] as const;

async function withDatabase<T>(config: Config, fn: (conn: Connection) => Promise<T>): Promise<T> {
  let conn: Connection;
  let embedded: EmbeddedServer | undefined;
  if (!config.DATABASE_URL && (await isListening(config.EMBEDDED_PG_PORT))) {
    conn = connect(embeddedUrl(config.EMBEDDED_PG_PORT, 'bootorch'), { max: 2 });
  } else {
    const { logger, openDatabase } = await import('../roles.ts');
    ({ conn, embedded } = await openDatabase(config, logger({ ...config, LOG_LEVEL: 'warn' })));
  }
  try {
    return await fn(conn);
  } finally {
    await conn.close();
    await embedded?.stop();
  }
}

const describe = (t: ApiTokenInfo) =>
  `${t.id}  ${t.role.padEnd(8)} ${(t.tenant ?? '-').padEnd(12)} ${t.subject}` +
  `${t.expiresAt ? `  expires ${t.expiresAt.toISOString()}` : ''}${t.revokedAt ? `  revoked ${t.revokedAt.toISOString()}` : ''}`;

function seconds(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--ttl must be a whole number of seconds >= 1, not "${v}"`);
  return n;
}

export function registerTokenCommands(program: Command, config: () => Config): void {
  const token = program
    .command('token')
    .description('API and node tokens, straight on the database (bootstrap without an identity provider)');

  token
    .command('create')
    .description('issue an API token; prints it once (only its hash is stored)')
    .requiredOption('--role <role>', `one of ${HUMAN_ROLES.join(', ')}`)
    .requiredOption('--subject <name>', 'who holds it (recorded as the actor of their writes)')
    .option('--tenant <tenant>', 'pin the token to a tenant (it must own xnames)')
    .option('--ttl <seconds>', 'lifetime in seconds (default: no expiry)', seconds)
    .action(async (o: { role: string; subject: string; tenant?: string; ttl?: number }) => {
      if (!(HUMAN_ROLES as readonly string[]).includes(o.role))
        throw new Error(`--role must be one of ${HUMAN_ROLES.join(', ')} (node tokens: bootorch token node <xname>)`);
      await withDatabase(config(), async ({ db }) => {
        if (o.tenant && !(await tenantExists(db, o.tenant))) throw new Error(`unknown tenant "${o.tenant}" (it owns no xnames)`);
        const issued = await createApiToken(db, {
          role: o.role as (typeof HUMAN_ROLES)[number],
          subject: o.subject,
          tenant: o.tenant ?? null,
          ttlSeconds: o.ttl,
        });
        process.stderr.write(`issued ${describe(issued.info)}\n`);
        process.stdout.write(`${issued.token}\n`);
      });
    });

  token
    .command('node <xname>')
    .description("issue a node reporter's credential (revokes the node's earlier ones)")
    .option('--ttl <seconds>', 'lifetime in seconds (default: no expiry)', seconds)
    .option('--out <file>', 'write the token to this file (mode 0600) instead of stdout')
    .action(async (xname: string, o: { ttl?: number; out?: string }) => {
      await withDatabase(config(), async ({ db }) => {
        const issued = await createNodeToken(db, xname, { ttlSeconds: o.ttl });
        process.stderr.write(`issued ${describe(issued.info)}\n`);
        if (o.out) {
          await writeFile(o.out, `${issued.token}\n`, { mode: 0o600 });
          await chmod(o.out, 0o600);
        } else {
          process.stdout.write(`${issued.token}\n`);
        }
      });
    });

  registerNodeTokensCommand(token, config, (fn) => withDatabase(config(), fn));

  token
    .command('list')
    .description('tokens (never their secrets), oldest first')
    .option('--all', 'include revoked tokens')
    .action(async (o: { all?: boolean }) => {
      await withDatabase(config(), async ({ db }) => {
        for (const t of await listApiTokens(db, { includeRevoked: !!o.all })) process.stdout.write(`${describe(t)}\n`);
      });
    });

  token
    .command('revoke <id>')
    .description('revoke a token by its id (the 16 hex digits after bto_)')
    .action(async (id: string) => {
      await withDatabase(config(), async ({ db }) => {
        const done = await revokeApiToken(db, id);
        process.stdout.write(done ? `revoked ${id}\n` : `${id}: no live token with this id\n`);
        if (!done) process.exitCode = 1;
      });
    });
}
