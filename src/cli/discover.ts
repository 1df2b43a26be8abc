/**
 * `bootorch node discover TARGET...` and `bootorch node inspect [XNAME...]` (docs/discovery.md): ask
 * Redfish BMCs what they manage and register or update the nodes (`--dry-run` shows what would change),
 * or re-inspect registered nodes with their stored login. The BMC password comes from
 * `--password-env VAR` or `--password-file PATH`, never the command line. Prints one line per system
 * (action, xname, BMC, what changes) and one per BMC that failed; exits 1 when a BMC failed or a system
 * was refused.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError } from './client.ts';
import { json, table } from './output.ts';
import { action, type RunContext } from './run.ts';

interface Found {
  address: string;
  xname: string | null;
  action: 'CREATE' | 'UPDATE' | 'UNCHANGED' | 'REFUSED';
  problem: string | null;
  changes: { field: string; from: string; to: string }[];
  hardware: { memoryGiB: number | null; biosVersion: string; macs: string[] };
}
interface Result {
  dryRun: boolean;
  asked: number;
  nodes: Found[];
  failures: { address: string; message: string }[];
}

const RESULT = `dryRun asked nodes { address bmcAddress xname action problem changes { field from to } hardware { memoryGiB cpuCount biosVersion bmcFirmwareVersion macs } } failures { address xname problem message }`;

function passwordFrom(opts: RunContext['opts']): string {
  if (opts.passwordEnv) {
    const v = process.env[opts.passwordEnv];
    if (v === undefined) throw new CliError(`--password-env: the environment has no ${opts.passwordEnv}`);
    return v;
  }
  if (opts.passwordFile) {
    try {
      return fs.readFileSync(opts.passwordFile, 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      throw new CliError(`--password-file: cannot read ${opts.passwordFile}: ${(e as Error).message}`);
    }
  }
  throw new CliError('give the BMC password with --password-env VAR or --password-file PATH');
}

/** What a change list says in one cell: every field when few, else the MAC and a count. */
function changeText(n: Found): string {
  if (n.action === 'REFUSED') return n.problem ?? '';
  const c = n.changes;
  if (n.action === 'CREATE') return `mac ${n.hardware.macs[0]}, ${n.hardware.memoryGiB ?? '?'} GiB, bios ${n.hardware.biosVersion || '?'}`;
  const shown = c.filter((x) => !x.field.startsWith('hardware.') || c.length <= 4);
  const rest = c.length - shown.length;
  return [...shown.map((x) => `${x.field}: ${x.from || '(none)'} -> ${x.to}`), ...(rest ? [`${rest} more hardware fields`] : [])].join(
    '; ',
  );
}

function print({ opts, out }: RunContext, r: Result): number {
  if (opts.json) {
    json(out, r);
  } else {
    const shown = r.nodes.filter((n) => n.action !== 'UNCHANGED' || opts.all);
    if (shown.length)
      table(out, shown, [
        ['ACTION', (n) => n.action.toLowerCase()],
        ['XNAME', (n) => n.xname ?? '-'],
        ['BMC', (n) => n.address],
        ['CHANGES', changeText],
      ]);
    for (const f of r.failures) out.write(`✗ ${f.address}: ${f.message}\n`);
    const count = (a: string) => r.nodes.filter((n) => n.action === a).length;
    out.write(
      `${r.dryRun ? 'dry run: nothing stored; ' : ''}${r.asked} BMC${r.asked === 1 ? '' : 's'} asked: ${count('CREATE')} new, ${count('UPDATE')} changed, ${count('UNCHANGED')} unchanged, ${count('REFUSED')} refused, ${r.failures.length} failed\n`,
    );
  }
  return r.failures.length || r.nodes.some((n) => n.action === 'REFUSED') ? 1 : 0;
}

export function registerDiscoverCommands(n: Command): void {
  n.command('discover')
    .description('read BMCs (Redfish or IPMI) and register or update their nodes (docs/discovery.md)')
    .argument('<targets...>', 'BMC addresses: 10.0.0.7, bmc7:8443, 10.0.0.0/24, 10.0.0.10-40')
    .requiredOption('--user <user>', 'BMC user name')
    .option('--password-env <var>', 'environment variable holding the BMC password')
    .option('--password-file <file>', 'file holding the BMC password')
    .option('--driver <driver>', 'redfish or ipmi', 'redfish')
    .option('--scheme <scheme>', 'redfish: https or http', 'https')
    .option('--port <port>', "the BMCs' port when a target gives none")
    .option('--xname-pattern <pattern>', 'new nodes: x3000c0s{n}b0n0, {n} = the BMC position in the targets')
    .option('--role <role>', 'new nodes: role (default Compute)')
    .option('--arch <arch>', 'new nodes: X86, ARM, OTHER or UNKNOWN')
    .option('--group <group...>', 'new nodes: groups')
    .option('--dry-run', 'show what would change, store nothing')
    .option('--all', 'list unchanged nodes too')
    .action(
      action(async (ctx, targets: string[]) => {
        const { opts } = ctx;
        const input: Record<string, unknown> = {
          targets,
          driver: String(opts.driver).toUpperCase(),
          scheme: String(opts.scheme).toUpperCase(),
          port: opts.port === undefined ? undefined : Number(opts.port),
          username: opts.user,
          password: passwordFrom(opts),
          xnamePattern: opts.xnamePattern,
          role: opts.role,
          arch: opts.arch?.toUpperCase(),
          groups: opts.group,
          dryRun: Boolean(opts.dryRun),
        };
        for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
        const r = await ctx.api.request(`mutation($i: DiscoverNodesInput!) { discoverNodes(input: $i) { ${RESULT} } }`, { i: input });
        return print(ctx, r.discoverNodes);
      }),
    );

  n.command('inspect')
    .description('re-read registered nodes from their BMCs (all when none is named)')
    .argument('[xnames...]')
    .option('--dry-run', 'show what changed, store nothing')
    .option('--all', 'list unchanged nodes too')
    .action(
      action(async (ctx, xnames: string[]) => {
        const r = await ctx.api.request(`mutation($x: [ID!], $d: Boolean) { inspectNodes(xnames: $x, dryRun: $d) { ${RESULT} } }`, {
          x: xnames.length ? xnames.flatMap((x) => x.split(',')).filter(Boolean) : null,
          d: Boolean(ctx.opts.dryRun),
        });
        return print(ctx, r.inspectNodes);
      }),
    );
}
