/**
 * `bootorch token nodes`: a reporter credential for every node HSM knows, in one go (a new machine,
 * or `bootorch sim`). Each is a node token (createNodeToken: it may report only for its own xname;
 * the node's earlier tokens are revoked), written as `<dir>/<xname>` (0600) for whatever installs
 * them on the nodes, or all in one JSON object xname -> token. `bootorch sim --report-tokens-dir DIR`
 * (or `--report-token-file FILE.json`) reads either.
 *
 *   bootorch token nodes --from-hsm http://cray-smd --out /srv/node-tokens [--ttl S] [--json FILE]
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import type { Connection } from '../db/client.ts';
import { SettingsRef } from '../adapters/common.ts';
import { ServiceClient } from '../adapters/http.ts';
import { HttpInventory } from '../adapters/inventory/http.ts';
import { createNodeToken } from '../auth/index.ts';
import { canonicalXname } from '../domain/xname.ts';

/** Node xnames from HSM's State/Components (Type=Node), with the CSM credential and CA of the adapters. */
export async function hsmNodeIds(url: string, c: Pick<Config, 'CSM_TOKEN' | 'CSM_TOKEN_FILE' | 'CSM_CA_FILE'>): Promise<string[]> {
  const client = new ServiceClient('hsm', { url, token: c.CSM_TOKEN, tokenFile: c.CSM_TOKEN_FILE, caFile: c.CSM_CA_FILE }, () => 30_000);
  try {
    const nodes = await new HttpInventory(client, new SettingsRef()).listNodes();
    return [...new Set(nodes.map((n) => canonicalXname(n.id)))].sort();
  } finally {
    await client.close();
  }
}

export function registerNodeTokensCommand(
  token: Command,
  config: () => Config,
  withDatabase: <T>(fn: (conn: Connection) => Promise<T>) => Promise<T>,
): void {
  token
    .command('nodes')
    .description("issue a reporter credential for every node in HSM (revokes each node's earlier ones)")
    .option('--from-hsm <url>', 'HSM base URL (default HSM_URL; CSM_TOKEN[_FILE] and CSM_CA_FILE apply)')
    .option('--out <dir>', 'write each token to <dir>/<xname> (mode 0600)')
    .option('--json <file>', 'write all tokens to one JSON object xname -> token (mode 0600)')
    .option('--ttl <seconds>', 'lifetime in seconds (default: no expiry)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--ttl must be a whole number of seconds >= 1, not "${v}"`);
      return n;
    })
    .action(async (o: { fromHsm?: string; out?: string; json?: string; ttl?: number }) => {
      const c = config();
      const hsm = o.fromHsm ?? c.HSM_URL;
      if (!hsm) throw new Error('give --from-hsm <url> (or set HSM_URL)');
      if (!o.out && !o.json) throw new Error('give --out <dir> and/or --json <file>: tokens are only shown once');
      const ids = await hsmNodeIds(hsm, c);
      if (!ids.length) throw new Error(`HSM at ${hsm} lists no nodes`);
      if (o.out) await mkdir(o.out, { recursive: true, mode: 0o700 });
      const tokens: Record<string, string> = {};
      await withDatabase(async ({ db }) => {
        // A few at a time: each is its own small transaction (revoke the old, insert the new).
        let next = 0;
        const work = async () => {
          for (let i = next++; i < ids.length; i = next++) {
            const id = ids[i]!;
            tokens[id] = (await createNodeToken(db, id, { ttlSeconds: o.ttl })).token;
            if (o.out) {
              const file = path.join(o.out, id);
              await writeFile(file, `${tokens[id]}\n`, { mode: 0o600 });
              await chmod(file, 0o600);
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(4, ids.length) }, work));
      });
      if (o.json) {
        const sorted = Object.fromEntries(ids.map((id) => [id, tokens[id]!]));
        await writeFile(o.json, `${JSON.stringify(sorted, null, 1)}\n`, { mode: 0o600 });
        await chmod(o.json, 0o600);
      }
      process.stderr.write(
        `issued ${ids.length} node tokens${o.out ? ` in ${o.out}/<xname>` : ''}${o.json ? `${o.out ? ' and' : ''} in ${o.json}` : ''}\n`,
      );
    });
}
