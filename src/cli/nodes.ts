/**
 * `bootorch node apply|register|list|delete` (and `discover|inspect`, cli/discover.ts): the node inventory of a site run without CSM
 * (BOOTORCH_ADAPTERS=standalone); `bootorch node release XNAME...` releases quarantined nodes (any
 * site, docs/quarantine.md). `apply -f FILE` takes YAML or JSON: a list of nodes, or
 * `{ nodes: [...] }`, snake_case or camelCase. BMC passwords never go on a command line: give
 * `password_env: VAR` or `password_file: PATH` (read here, sent once, stored sealed by the API).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError } from './client.ts';
import { json, table } from './output.ts';
import { action } from './run.ts';
import { readTemplateFile } from './templates.ts';
import { registerDiscoverCommands } from './discover.ts';

type Obj = Record<string, any>;

const NODE_FIELDS =
  'xname hostname mac arch role subRole groups enabled locked bmc { driver address username hasPassword } bootParameters { kernel initrd params setAt } hardware { memoryGiB cpuCount cpuModel biosVersion bmcFirmwareVersion macs } inspectedAt';
const REGISTER = `mutation($n: [NodeInput!]!) { registerNodes(nodes: $n) { xname } }`;
const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function password(b: Obj, where: string): string | undefined {
  const env = b.password_env ?? b.passwordEnv;
  const file = b.password_file ?? b.passwordFile;
  if (env !== undefined) {
    const v = process.env[String(env)];
    if (v === undefined) throw new CliError(`${where}.bmc.password_env: the environment has no ${env}`);
    return v;
  }
  if (file !== undefined) {
    try {
      return fs.readFileSync(String(file), 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      throw new CliError(`${where}.bmc.password_file: cannot read ${file}: ${(e as Error).message}`);
    }
  }
  return b.password === undefined ? undefined : String(b.password);
}

/** One file entry -> NodeInput (the API checks the values and names bad fields). */
export function nodeInput(n: Obj, where: string): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(n)) if (k !== 'bmc' && v !== null && v !== undefined) out[camel(k)] = v;
  if (out.mac !== undefined) out.mac = String(out.mac);
  if (typeof out.arch === 'string') out.arch = out.arch.toUpperCase();
  if (n.bmc) {
    const b = n.bmc as Obj;
    out.bmc = {
      driver: String(b.driver ?? '').toUpperCase(),
      address: b.address,
      username: b.username ?? b.user,
      password: password(b, where),
    };
    for (const k of Object.keys(out.bmc)) if (out.bmc[k] === undefined) delete out.bmc[k];
  }
  return out;
}

export function registerNodeCommands(program: Command): void {
  const n = program
    .command('node')
    .description('the node inventory of a site without CSM (BOOTORCH_ADAPTERS=standalone), and quarantine release');

  n.command('apply')
    .description('register or replace nodes from a YAML or JSON file')
    .requiredOption('-f, --file <file>', 'the file (- for stdin)')
    .action(
      action(async ({ api, opts, out }) => {
        const docs = readTemplateFile(opts.file).flatMap((d) => (Array.isArray(d.nodes) ? d.nodes : [d])) as Obj[];
        if (docs.length === 0) throw new CliError(`${opts.file} holds no node`);
        const r = await api.request(REGISTER, { n: docs.map((d, i) => nodeInput(d, `nodes[${i}]`)) });
        if (opts.json) json(out, r.registerNodes);
        else out.write(`${r.registerNodes.length} node${r.registerNodes.length === 1 ? '' : 's'} registered\n`);
      }),
    );

  n.command('register')
    .description('register or replace one node')
    .argument('<xname>')
    .requiredOption('--mac <mac>', 'MAC of the NIC it network-boots from')
    .option('--hostname <name>')
    .option('--arch <arch>', 'X86, ARM, OTHER or UNKNOWN')
    .option('--role <role>')
    .option('--group <group...>', 'groups it belongs to')
    .option('--disabled', 'registered disabled')
    .option('--bmc-driver <driver>', 'ipmi, redfish or none', 'none')
    .option('--bmc-address <address>', 'ipmi: host[:port]; redfish: the ComputerSystem URL')
    .option('--bmc-user <user>')
    .option('--bmc-password-env <var>', 'environment variable holding the BMC password')
    .option('--bmc-password-file <file>', 'file holding the BMC password')
    .action(
      action(async ({ api, opts, out }, xname: string) => {
        const input = nodeInput(
          {
            xname,
            mac: opts.mac,
            hostname: opts.hostname,
            arch: opts.arch,
            role: opts.role,
            groups: opts.group,
            enabled: opts.disabled ? false : undefined,
            bmc: {
              driver: opts.bmcDriver,
              address: opts.bmcAddress,
              username: opts.bmcUser,
              password_env: opts.bmcPasswordEnv,
              password_file: opts.bmcPasswordFile,
            },
          },
          'nodes[0]',
        );
        await api.request(REGISTER, { n: [input] });
        out.write(`node ${xname} registered\n`);
      }),
    );

  registerDiscoverCommands(n);

  n.command('list')
    .description('registered nodes (BMC passwords are never shown)')
    .option('--limit <expr>', 'a limit expression, hardware terms too: compute,&memoryGiB>=1024,!bios<1.4.2')
    .action(
      action(async ({ api, opts, out }) => {
        const r = await api.request(`query($l: String) { nodes(limit: $l) { ${NODE_FIELDS} } }`, { l: opts.limit ?? null });
        if (opts.json) return json(out, r.nodes);
        table(out, r.nodes as Obj[], [
          ['XNAME', (x) => x.xname],
          ['MAC', (x) => x.mac],
          ['ARCH', (x) => x.arch],
          ['GROUPS', (x) => x.groups],
          ['ENABLED', (x) => x.enabled],
          ['BMC', (x) => `${x.bmc.driver.toLowerCase()} ${x.bmc.address}`.trim()],
          ['MEM GiB', (x) => x.hardware?.memoryGiB],
          ['BIOS', (x) => x.hardware?.biosVersion],
          ['KERNEL', (x) => x.bootParameters?.kernel],
        ]);
      }),
    );

  n.command('delete')
    .description('forget a node')
    .argument('<xname>')
    .action(
      action(async ({ api, out }, xname: string) => {
        const r = await api.request('mutation($x: ID!) { deleteNode(xname: $x) }', { x: xname });
        if (!r.deleteNode) throw new CliError(`no node "${xname}"`);
        out.write(`node ${xname} deleted\n`);
      }),
    );

  n.command('release')
    .description('release quarantined nodes: new sessions include them again (docs/quarantine.md)')
    .argument('<xnames...>')
    .action(
      action(async ({ api, opts, out }, xnames: string[]) => {
        const r = (
          await api.request('mutation($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }', {
            ids: xnames.flatMap((x) => x.split(',')).filter(Boolean),
          })
        ).releaseQuarantine;
        if (opts.json) return json(out, r);
        if (r.released.length) out.write(`released from quarantine: ${r.released.join(',')}\n`);
        if (r.notQuarantined.length) out.write(`not quarantined (left as they are): ${r.notQuarantined.join(',')}\n`);
      }),
    );
}
