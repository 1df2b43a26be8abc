/** `bootorch component list|get|enable|disable`, `bootorch apply-staged`, `bootorch options get|set`. */
import type { Command } from 'commander';
import { CliError, EXIT_FAILED, type ApiClient } from './client.ts';
import { json, table, yaml } from './output.ts';
import { action } from './run.ts';

const COMPONENT_FIELDS = `id enabled error failureReason session sessionTenant retryPolicy updatedAt
  status { phase status statusOverride }
  actualState { bootArtifacts { kernel kernelParameters initrd } bssToken lastUpdated }
  desiredState { bootArtifacts { kernel kernelParameters initrd } configuration bssToken lastUpdated }
  stagedState { bootArtifacts { kernel kernelParameters initrd } configuration session lastUpdated }
  lastAction { action failed lastUpdated }
  eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }`;
const ROW_FIELDS = 'id enabled error session status { phase status }';

/** `a,b c` -> [a, b, c] */
const list = (v: string | string[]) =>
  (Array.isArray(v) ? v : [v])
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean);
const enumArg = (v: string) => v.trim().toUpperCase().replace(/-/g, '_');

function parseBool(v: string): boolean {
  if (/^(true|yes|1)$/i.test(v)) return true;
  if (/^(false|no|0)$/i.test(v)) return false;
  throw new CliError(`expected true or false, got "${v}"`, 2);
}

async function setEnabled(api: ApiClient, ids: string[], enabled: boolean, out: NodeJS.WritableStream): Promise<void> {
  if (ids.length === 0) throw new CliError('give at least one xname', 2);
  const r = await api.request(
    `mutation($ids: [ID!]!, $e: Boolean!) { patchComponents(filter: { ids: $ids }, patch: { enabled: $e }) { id } }`,
    { ids, e: enabled },
  );
  out.write(`${r.patchComponents.length} component${r.patchComponents.length === 1 ? '' : 's'} ${enabled ? 'enabled' : 'disabled'}\n`);
}

export function registerComponentCommands(program: Command): void {
  const c = program.command('component').description('components (one node each, by xname)');

  c.command('list')
    .description('components, by id')
    .option('--ids <xnames>', 'comma-separated xnames')
    .option('--session <name>', 'owned by this session')
    .option('--phase <phase>', 'none, powering_on, powering_off or configuring')
    .option('--status <statuses>', 'any of these statuses, comma-separated (e.g. failed,on_hold)')
    .option('--enabled <bool>', 'true or false')
    .option('--limit <n>', 'at most this many (default: all)', (v) => Number(v))
    .action(
      action(async ({ api, opts, out }) => {
        const filter = {
          ids: opts.ids ? list(opts.ids) : undefined,
          session: opts.session,
          phase: opts.phase ? enumArg(opts.phase) : undefined,
          status: opts.status ? list(opts.status).map(enumArg) : undefined,
          enabled: opts.enabled === undefined ? undefined : parseBool(opts.enabled),
        };
        const rows: any[] = [];
        let after: string | null = null;
        const max = Number.isFinite(opts.limit) && opts.limit > 0 ? opts.limit : Infinity;
        do {
          const first = Math.min(1000, max - rows.length);
          const page: any = (
            await api.request(
              `query($f: ComponentFilter, $first: Int, $after: String) { components(filter: $f, first: $first, after: $after) {
          nodes { ${opts.json ? COMPONENT_FIELDS : ROW_FIELDS} } pageInfo { hasNextPage endCursor } } }`,
              { f: filter, first, after },
            )
          ).components;
          rows.push(...page.nodes);
          after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
        } while (after && rows.length < max);
        if (opts.json) return json(out, rows);
        table(out, rows, [
          ['ID', (x) => x.id],
          ['ENABLED', (x) => x.enabled],
          ['PHASE', (x) => x.status.phase.toLowerCase()],
          ['STATUS', (x) => x.status.status.toLowerCase()],
          ['SESSION', (x) => x.session],
          ['ERROR', (x) => x.error],
        ]);
      }),
    );

  c.command('get')
    .description('one component')
    .argument('<xname>')
    .action(
      action(async ({ api, opts, out }, id: string) => {
        const r = await api.request(`query($id: ID!) { component(id: $id) { ${COMPONENT_FIELDS} } }`, { id });
        if (!r.component) throw new CliError(`no component "${id}"`);
        (opts.json ? json : yaml)(out, r.component);
      }),
    );

  c.command('enable')
    .description('enable components (operators act on them)')
    .argument('<xnames...>')
    .action(action(async ({ api, out }, ids: string[]) => setEnabled(api, list(ids), true, out)));
  c.command('disable')
    .description('disable components (operators leave them alone)')
    .argument('<xnames...>')
    .action(action(async ({ api, out }, ids: string[]) => setEnabled(api, list(ids), false, out)));

  program
    .command('apply-staged')
    .description('move staged state to desired state and enable (exit 1 if any failed)')
    .argument('<xnames...>', 'xnames, comma- or space-separated')
    .action(
      action(async ({ api, opts, out }, ids: string[]) => {
        const r = (
          await api.request(`mutation($x: [ID!]!) { applyStaged(xnames: $x) { succeeded failed ignored failures { id error } } }`, {
            x: list(ids),
          })
        ).applyStaged;
        if (opts.json) json(out, r);
        else {
          out.write(`applied ${r.succeeded.length}, failed ${r.failed.length}, ignored ${r.ignored.length}\n`);
          for (const f of r.failures) out.write(`  ✗ ${f.id}: ${f.error}\n`);
          if (r.ignored.length) out.write(`  ignored: ${r.ignored.join(',')}\n`);
        }
        return r.failed.length ? EXIT_FAILED : 0;
      }),
    );

  const o = program.command('options').description('service options (BOS /options)');
  o.command('get')
    .description('every option, or the given ones')
    .argument('[keys...]')
    .action(
      action(async ({ api, opts, out }, keys: string[]) => {
        const all = (await api.request('{ options { ' + (await optionFields(api)).map((f) => f.name).join(' ') + ' } }')).options;
        const want = keys.map(camel);
        const unknown = want.filter((k) => !(k in all));
        if (unknown.length) throw new CliError(`unknown option${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, 2);
        const shown = want.length ? Object.fromEntries(want.map((k) => [k, all[k]])) : all;
        (opts.json ? json : yaml)(out, shown);
      }),
    );
  o.command('set')
    .description('change options: KEY=VALUE ... (snake_case or camelCase keys)')
    .argument('<pairs...>')
    .action(
      action(async ({ api, opts, out }, pairs: string[]) => {
        const fields = new Map((await optionFields(api)).map((f) => [f.name, f.type]));
        const patch: Record<string, unknown> = {};
        for (const p of pairs) {
          const eq = p.indexOf('=');
          if (eq < 1) throw new CliError(`expected KEY=VALUE, got "${p}"`, 2);
          const key = camel(p.slice(0, eq).trim());
          const type = fields.get(key);
          if (!type) throw new CliError(`unknown option "${p.slice(0, eq)}"`, 2);
          patch[key] = coerce(p.slice(eq + 1), type, key);
        }
        const r = (
          await api.request(`mutation($p: OptionsPatchInput!) { patchOptions(patch: $p) { ${Object.keys(patch).join(' ')} } }`, {
            p: patch,
          })
        ).patchOptions;
        (opts.json ? json : yaml)(out, r);
      }),
    );
}

const camel = (k: string) => k.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());

/** The patchable options and their scalar types, asked of the API itself. */
async function optionFields(api: ApiClient): Promise<Array<{ name: string; type: string }>> {
  const r = await api.request(`{ __type(name: "OptionsPatchInput") { inputFields { name type { name ofType { name } } } } }`);
  return (r.__type?.inputFields ?? []).map((f: any) => ({ name: f.name, type: f.type.name ?? f.type.ofType?.name }));
}

function coerce(raw: string, type: string, key: string): unknown {
  const v = raw.trim();
  if (type === 'Boolean') return parseBool(v);
  if (type === 'Int' || type === 'Float') {
    const n = Number(v);
    if (v === '' || !Number.isFinite(n) || (type === 'Int' && !Number.isInteger(n)))
      throw new CliError(`${key} needs ${type === 'Int' ? 'a whole number' : 'a number'}, got "${raw}"`, 2);
    return n;
  }
  return v;
}
