/**
 * `bootorch token nodes`: a reporter credential for every node, in one go (a new machine, or
 * `bootorch sim`): the nodes HSM knows (`--from-hsm`), or the nodes registered with bootorch on a
 * site without CSM (`--registered`). Each is a node token (createNodeTokens: it may report only for
 * its own xname; the node's earlier tokens are revoked, a thousand nodes per transaction), written as
 * `<dir>/<xname>` (0600) for whatever installs them on the nodes, or all in one JSON object
 * xname -> token. `bootorch sim --report-tokens-dir DIR` (or `--report-token-file FILE.json`) reads either.
 *
 *   bootorch token nodes --from-hsm http://cray-smd --out /srv/node-tokens [--ttl S] [--json-file FILE]
 *   bootorch token nodes --registered --out /srv/node-tokens
 */
import { closeSync, constants, fchmodSync, ftruncateSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import type { Connection } from '../db/client.ts';
import { SettingsRef } from '../adapters/common.ts';
import { ServiceClient } from '../adapters/http.ts';
import { HttpInventory } from '../adapters/inventory/http.ts';
import { createNodeTokens } from '../auth/index.ts';
import { listNodes } from '../db/node-inventory.ts';
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

/**
 * A secret file: 0600 even when the file existed with a wider mode (open's mode applies only to a new
 * file). Written over in place and cut to length rather than truncated first: re-issuing rewrites
 * 100,000 files of the same length, and truncating frees each one's block only to allocate another
 * (three times the system time). Synchronous: writeFile's round trips through libuv's thread pool
 * cost twice as long for 100,000 small files.
 */
function writeSecret(file: string, text: string): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT, 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeFileSync(fd, text); // from offset 0, all of it
    ftruncateSync(fd, Buffer.byteLength(text));
  } finally {
    closeSync(fd);
  }
}

export function registerNodeTokensCommand(
  token: Command,
  config: () => Config,
  withDatabase: <T>(fn: (conn: Connection) => Promise<T>) => Promise<T>,
): void {
  token
    .command('nodes')
    .description("issue a reporter credential for every node in HSM, or every registered node (revokes each node's earlier ones)")
    .option('--from-hsm <url>', 'HSM base URL (default HSM_URL; CSM_TOKEN[_FILE] and CSM_CA_FILE apply)')
    .option('--registered', 'the nodes registered with bootorch (a site without CSM: `bootorch node register`), not HSM')
    .option('--out <dir>', 'write each token to <dir>/<xname> (mode 0600)')
    // Not `--json`: the program's own `--json` (output format) would take the flag and leave the file name over.
    .option('--json-file <file>', 'write all tokens to one JSON object xname -> token (mode 0600)')
    .option('--ttl <seconds>', 'lifetime in seconds (default: no expiry)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--ttl must be a whole number of seconds >= 1, not "${v}"`);
      return n;
    })
    .action(async (o: { fromHsm?: string; registered?: boolean; out?: string; jsonFile?: string; ttl?: number }) => {
      const c = config();
      if (o.registered && o.fromHsm) throw new Error('give --from-hsm <url> or --registered, not both');
      const hsm = o.registered ? undefined : (o.fromHsm ?? c.HSM_URL);
      if (!o.registered && !hsm) throw new Error('give --from-hsm <url> (or set HSM_URL), or --registered');
      if (!o.out && !o.jsonFile) throw new Error('give --out <dir> and/or --json-file <file>: tokens are only shown once');
      const from = hsm ? `HSM at ${hsm}` : 'the node registry';
      const out = o.out;
      if (out) mkdirSync(out, { recursive: true, mode: 0o700 });
      const tokens = await withDatabase(async ({ db }) => {
        const ids = hsm ? await hsmNodeIds(hsm, c) : (await listNodes(db)).map((n) => n.id);
        if (!ids.length) throw new Error(`${from} lists no nodes`);
        // Each chunk's files as soon as it is stored: if a later chunk fails, the nodes whose earlier
        // tokens are already revoked have their new ones on disk.
        const issued = await createNodeTokens(db, ids, {
          ttlSeconds: o.ttl,
          onIssued: (chunk) => {
            if (out) for (const t of chunk) writeSecret(path.join(out, t.info.subject), `${t.token}\n`);
          },
        });
        return new Map(ids.map((id, i) => [id, issued[i]!.token]));
      });
      if (o.jsonFile) {
        const sorted = Object.fromEntries([...tokens].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        writeSecret(o.jsonFile, `${JSON.stringify(sorted, null, 1)}\n`);
      }
      process.stderr.write(
        `issued ${tokens.size} node tokens for ${from}${o.out ? ` in ${o.out}/<xname>` : ''}${o.jsonFile ? `${o.out ? ' and' : ''} in ${o.jsonFile}` : ''}\n`,
      );
    });
}
