/**
 * `bootorch session plan|explain`, `bootorch explain NODE` and `bootorch timeline`: the dry run and
 * the why.
 */
import type { Command } from 'commander';
import { CliError } from './client.ts';
import { json, table } from './output.ts';
import { action } from './run.ts';

const OPERATIONS = ['boot', 'reboot', 'shutdown', 'rescue', 'unrescue'];
const lower = (s: string | null | undefined) => (s ?? '').toLowerCase().replace(/_/g, ' ');

export function registerExplainCommands(program: Command): void {
  const session = program.commands.find((c) => c.name() === 'session');
  if (!session) throw new Error('register the session commands first');

  session
    .command('plan')
    .description('dry run: what a session would do to each node, writing nothing (exit 1 if it would be refused)')
    .requiredOption('--template <name>', 'session template')
    .requiredOption('--operation <op>', 'boot, reboot or shutdown')
    .option('--limit <expr>', 'limit expression')
    .option('--include-disabled', 'include nodes disabled in the inventory')
    .option('--nodes', 'list every node with its planned action')
    .action(
      action(async ({ api, opts, out }) => {
        const op = String(opts.operation).toLowerCase();
        if (!OPERATIONS.includes(op)) throw new CliError(`--operation must be one of ${OPERATIONS.join(', ')}`, 2);
        const input = {
          templateName: opts.template,
          operation: op.toUpperCase(),
          limit: opts.limit,
          includeDisabled: Boolean(opts.includeDisabled),
        };
        const p = (
          await api.request(
            `query($i: CreateSessionInput!) { planSession(input: $i) {
        valid setupError errors { field message } warnings { field message }
        counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }
        bootSets { name nodeCount kernel kernelParameters initrd configuration }
        nodes { id bootSet action skipReason detail } } }`,
            { i: input },
          )
        ).planSession;
        if (opts.json) {
          json(out, p);
          return p.valid && !p.setupError ? 0 : 1;
        }
        for (const e of p.errors) out.write(`error: ${e.field ? `${e.field}: ` : ''}${e.message}\n`);
        for (const w of p.warnings) out.write(`warning: ${w.field ? `${w.field}: ` : ''}${w.message}\n`);
        if (!p.valid) {
          out.write('createSession would refuse this input.\n');
          return 1;
        }
        if (p.setupError) {
          out.write(`session setup would fail: ${p.setupError}\n`);
          return 1;
        }
        const c = p.counts;
        out.write(
          `${op} of ${opts.template}${opts.limit ? ` (limit ${opts.limit})` : ''}: ${c.managed} nodes managed, ${c.skipped} left out\n`,
        );
        out.write(
          `  power cycle ${c.powerCycle}, power on ${c.powerOn}, power off ${c.powerOff}, configure only ${c.configureOnly}, nothing to do ${c.nothing}${c.unknown ? `, unknown ${c.unknown}` : ''}\n`,
        );
        for (const b of p.bootSets) {
          out.write(
            `boot set ${b.name}: ${b.nodeCount} nodes\n  kernel ${b.kernel || '(none: off)'}\n  initrd ${b.initrd || '-'}\n  params ${b.kernelParameters || '-'}\n  configuration ${b.configuration || '(none)'}\n`,
          );
        }
        const skipped = new Map<string, string[]>();
        for (const n of p.nodes) if (n.action === 'SKIP') skipped.set(n.skipReason, [...(skipped.get(n.skipReason) ?? []), n.id]);
        for (const [reason, ids] of skipped)
          out.write(`left out (${lower(reason)}): ${ids.length}: ${ids.slice(0, 10).join(',')}${ids.length > 10 ? ',...' : ''}\n`);
        if (opts.nodes)
          table(out, p.nodes as Array<Record<string, string | null>>, [
            ['NODE', (n) => n.id],
            ['ACTION', (n) => lower(n.action)],
            ['BOOT SET', (n) => n.bootSet ?? ''],
            ['WHY', (n) => n.detail],
          ]);
        return 0;
      }),
    );

  session
    .command('explain')
    .description('why a session is not complete: its remaining nodes grouped by what they wait for')
    .argument('<name>')
    .action(
      action(async ({ api, opts, out }, name: string) => {
        const e = (
          await api.request(
            `query($n: String!) { explainSession(name: $n) { name state paused pauseReason remaining
        groups { waitingFor description count examples } approval { reason waiting approvedBy } } }`,
            { n: name },
          )
        ).explainSession;
        if (!e) throw new CliError(`no session "${name}"`);
        if (opts.json) return json(out, e);
        out.write(
          `session ${e.name}: ${lower(e.state)}${e.paused ? ` (paused: ${e.pauseReason ?? ''})` : ''}, ${e.remaining} nodes remaining\n`,
        );
        if (e.approval?.waiting)
          out.write(`  waits for a second admin's approval (bootorch session approve ${e.name}): ${e.approval.reason}\n`);
        else if (e.approval) out.write(`  approved by ${e.approval.approvedBy}: ${e.approval.reason}\n`);
        for (const g of e.groups) out.write(`  ${String(g.count).padStart(6)}  ${g.description}  e.g. ${g.examples.join(',')}\n`);
      }),
    );

  program
    .command('explain')
    .description('where a node stands, what it waits for, and what blocks it')
    .argument('<xname>')
    .action(
      action(async ({ api, opts, out }, id: string) => {
        const e = (
          await api.request(
            `query($id: ID!) { explain(componentId: $id) { componentId summary waitingFor nextOperator phase status enabled
        session sessionPaused sessionPauseReason powerState cfsDesiredConfig cfsStatus decision { rule phase why }
        criteria { operator criterion met detail } blockers { kind detail }
        lastEvents { cursor at kind actor action fromPhase toPhase toStatus error reason } consoleTail } }`,
            { id },
          )
        ).explain;
        if (!e) throw new CliError(`no component "${id}"`);
        if (opts.json) return json(out, e);
        out.write(`${e.componentId}: ${e.summary}\n`);
        out.write(
          `  phase ${lower(e.phase) || '(none)'}, status ${lower(e.status)}, ${e.enabled ? 'enabled' : 'disabled'}${e.session ? `, session ${e.session}${e.sessionPaused ? ' (paused)' : ''}` : ''}\n`,
        );
        out.write(`  power ${e.powerState ?? 'unknown'}; CFS ${e.cfsDesiredConfig ?? '?'} ${e.cfsStatus ?? ''}\n`);
        if (e.decision) out.write(`  status would decide: rule ${e.decision.rule}, ${e.decision.why}\n`);
        out.write(`  next: ${e.nextOperator ?? 'no operator'}\n`);
        for (const b of e.blockers) out.write(`  blocked: ${b.kind}: ${b.detail}\n`);
        const byOp = new Map<string, typeof e.criteria>();
        for (const c of e.criteria) byOp.set(c.operator, [...(byOp.get(c.operator) ?? []), c]);
        for (const [op, list] of byOp) {
          out.write(`  ${op}:\n`);
          for (const c of list) out.write(`    [${c.met ? 'x' : ' '}] ${c.criterion}${c.detail ? ` (${c.detail})` : ''}\n`);
        }
        if (e.consoleTail?.length) {
          out.write('  console (last lines):\n');
          for (const l of e.consoleTail) out.write(`    | ${l}\n`);
        }
        out.write('  last events:\n');
        for (const ev of e.lastEvents) {
          out.write(
            `    ${ev.at} ${ev.kind} ${ev.action ?? ''}${ev.toPhase !== null ? ` -> ${ev.toPhase || "''"}` : ''}${ev.toStatus ? ` (${ev.toStatus})` : ''} by ${ev.actor}${ev.error ? `: ${ev.error}` : ''}\n`,
          );
        }
      }),
    );
}
