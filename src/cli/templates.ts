/**
 * `bootorch template apply|list|get|validate|delete`. `apply -f FILE` takes YAML or JSON (one
 * template, a list, or several YAML documents), in BOS's shape (`boot_sets` keyed by name, snake_case)
 * or the GraphQL shape (`bootSets` list, camelCase); each needs a `name` (or --name for one).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import YAML from 'yaml';
import { CliError, EXIT_FAILED } from './client.ts';
import { json, table, yaml } from './output.ts';
import { action } from './run.ts';
import { BOOT_SET_FIELDS } from '../domain/templates.ts';
import { deployInput } from '../domain/deploy.ts';

const TEMPLATE_FIELDS = `name tenant description enableCfs cfs { configuration } createdAt updatedAt
  bootSets { name path type etag kernelParameters nodeList nodeRolesGroups nodeGroups arch rootfsProvider rootfsProviderPassthrough rescueImage cfs { configuration }
    deploy { image { url format checksum } rootDeviceHints { size name serial } configDrive { hasUserData userDataBytes metaData } } }
  rollout { maxInFlight powerOnWaveSize powerOnWaveIntervalSeconds canary failureBudget maxPowerOffWaitTime maxPowerOnWaitTime maxBootWaitTime retryPolicy jobRetryDelay jobRetryBackoff jobRetryMaxDelay }`;

type Obj = Record<string, any>;

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
/** The value under the snake_case or the camelCase spelling. */
const pick = (o: Obj, snake: string) => o[snake] ?? o[camel(snake)];

const BOOT_SET_KEYS: string[] = BOOT_SET_FIELDS.filter((k) => k !== 'name');
const ARCH: Record<string, string> = { X86: 'X86', ARM: 'ARM', OTHER: 'OTHER', UNKNOWN: 'UNKNOWN' };

function bootSet(name: string, b: Obj, warn: (m: string) => void): Obj {
  const out: Obj = { name };
  for (const k of BOOT_SET_KEYS) {
    const v = pick(b, k);
    if (v !== undefined && v !== null) out[camel(k)] = v;
  }
  if (typeof out.arch === 'string') out.arch = ARCH[out.arch.toUpperCase()] ?? out.arch;
  if (out.cfs) out.cfs = { configuration: out.cfs.configuration };
  if (out.deploy) {
    out.deploy = deployInput(out.deploy);
    // GraphQL's enum spelling (RAW, QCOW2); files may use the stored one (raw).
    if (typeof out.deploy.image?.format === 'string') out.deploy.image.format = out.deploy.image.format.toUpperCase();
  }
  for (const k of Object.keys(b))
    if (k !== 'name' && !BOOT_SET_KEYS.includes(k) && !BOOT_SET_KEYS.map(camel).includes(k))
      warn(`boot set ${name}: ignoring unknown field "${k}"`);
  return out;
}

/** One file document -> the putSessionTemplate arguments. */
export function templateInput(doc: Obj, fallbackName: string | undefined, warn: (m: string) => void): { name: string; input: Obj } {
  const name = doc.name ?? fallbackName;
  if (typeof name !== 'string' || !name) throw new CliError('a template in the file has no name (add `name:` or give --name)');
  const sets = pick(doc, 'boot_sets');
  if (!sets || typeof sets !== 'object') throw new CliError(`template ${name}: no boot_sets / bootSets`);
  const bootSets = Array.isArray(sets)
    ? sets.map((b: Obj) => bootSet(String(b.name ?? ''), b, warn))
    : Object.entries(sets as Obj).map(([n, b]) => bootSet(n, b as Obj, warn));
  const input: Obj = { bootSets };
  if (doc.description !== undefined) input.description = doc.description;
  const enableCfs = pick(doc, 'enable_cfs');
  if (enableCfs !== undefined) input.enableCfs = enableCfs;
  if (doc.cfs) input.cfs = { configuration: doc.cfs.configuration };
  if (doc.rollout) input.rollout = Object.fromEntries(Object.entries(doc.rollout as Obj).map(([k, v]) => [camel(k), v]));
  const known = new Set([
    'name',
    'tenant',
    'description',
    'enable_cfs',
    'enableCfs',
    'cfs',
    'boot_sets',
    'bootSets',
    'rollout',
    'links',
    'createdAt',
    'updatedAt',
  ]);
  for (const k of Object.keys(doc)) if (!known.has(k)) warn(`template ${name}: ignoring unknown field "${k}"`);
  return { name, input };
}

export function readTemplateFile(file: string): Obj[] {
  let text: string;
  try {
    text = file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const docs = YAML.parseAllDocuments(text);
  const bad = docs.find((d) => d.errors.length);
  if (bad) throw new CliError(`${file} is neither YAML nor JSON: ${bad.errors[0]!.message}`);
  return docs.flatMap((d) => {
    const v = d.toJS() as unknown;
    return Array.isArray(v) ? v : v == null ? [] : [v];
  }) as Obj[];
}

export function registerTemplateCommands(program: Command): void {
  const t = program.command('template').description('session templates');

  t.command('apply')
    .description('create or replace templates from a YAML or JSON file')
    .requiredOption('-f, --file <file>', 'the file (- for stdin)')
    .option('--name <name>', 'name of the template when the file does not give one')
    .action(
      action(async ({ api, opts, out }) => {
        const docs = readTemplateFile(opts.file);
        if (docs.length === 0) throw new CliError(`${opts.file} holds no template`);
        const warn = (m: string) => process.stderr.write(`warning: ${m}\n`);
        for (const doc of docs) {
          const { name, input } = templateInput(doc, docs.length === 1 ? opts.name : undefined, warn);
          const r = await api.request(
            `mutation($n: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $n, input: $i) {
          template { name } warnings { field message } } }`,
            { n: name, i: input },
          );
          if (opts.json) json(out, r.putSessionTemplate);
          else out.write(`template ${name} applied\n`);
          for (const w of r.putSessionTemplate.warnings) warn(`${name}: ${w.field ? `${w.field}: ` : ''}${w.message}`);
        }
      }),
    );

  t.command('list')
    .description('templates visible to you')
    .action(
      action(async ({ api, opts, out }) => {
        const r = await api.request(`{ sessionTemplates { ${TEMPLATE_FIELDS} } }`);
        if (opts.json) return json(out, r.sessionTemplates);
        table(out, r.sessionTemplates as Obj[], [
          ['NAME', (x) => x.name],
          ['TENANT', (x) => x.tenant],
          ['BOOT SETS', (x) => x.bootSets.map((b: Obj) => b.name)],
          ['CONFIGURATION', (x) => x.cfs?.configuration],
          ['DESCRIPTION', (x) => x.description],
        ]);
      }),
    );

  t.command('get')
    .description('one template')
    .argument('<name>')
    .action(
      action(async ({ api, opts, out }, name: string) => {
        const r = await api.request(`query($n: String!) { sessionTemplate(name: $n) { ${TEMPLATE_FIELDS} } }`, { n: name });
        if (!r.sessionTemplate) throw new CliError(`no template "${name}"`);
        (opts.json ? json : yaml)(out, r.sessionTemplate);
      }),
    );

  t.command('validate')
    .description('the checks a boot session would run (exit 1 when invalid)')
    .argument('<name>')
    .action(
      action(async ({ api, opts, out }, name: string) => {
        const r = (
          await api.request(
            `query($n: String!) { validateSessionTemplate(name: $n) { valid errors { field message } warnings { field message } } }`,
            { n: name },
          )
        ).validateSessionTemplate;
        if (opts.json) json(out, r);
        else {
          out.write(`template ${name} is ${r.valid ? 'valid' : 'NOT valid'}\n`);
          for (const e of r.errors) out.write(`  error: ${e.field ? `${e.field}: ` : ''}${e.message}\n`);
          for (const w of r.warnings) out.write(`  warning: ${w.field ? `${w.field}: ` : ''}${w.message}\n`);
        }
        return r.valid ? 0 : EXIT_FAILED;
      }),
    );

  t.command('delete')
    .description('delete a template')
    .argument('<name>')
    .action(
      action(async ({ api, out }, name: string) => {
        await api.request('mutation($n: String!) { deleteSessionTemplate(name: $n) }', { n: name });
        out.write(`template ${name} deleted\n`);
      }),
    );
}
