/** `bootorch session create|list|get|approve|status|delete|watch`. */
import type { Command } from 'commander';
import { CliError } from './client.ts';
import { json, table, yaml } from './output.ts';
import { action } from './run.ts';
import { watchSession } from './watch.ts';
import { counts, summaryText, type Progress } from './watch-display.ts';

const SESSION_FIELDS = `name tenant operation templateName limit stage includeDisabled components createdBy paused pauseReason aborted
  status { status startTime endTime error } approval { reason waiting approvedBy approvedAt }
  rollout { maxInFlight powerOnWaveSize powerOnWaveIntervalSeconds canary failureBudget maxPowerOffWaitTime maxPowerOnWaitTime maxBootWaitTime retryPolicy jobRetryDelay jobRetryBackoff jobRetryMaxDelay }`;
const GROUP = 'key count ids list';
const STATUS_FIELDS = `name status managedComponentsCount percentSuccessful percentFailed percentStaged
  phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring percentDeploying }
  errorSummary { ${GROUP} } failureReasons { ${GROUP} } timing { startTime endTime duration } paused pauseReason savedAt`;

const OPERATIONS = ['boot', 'reboot', 'shutdown', 'rescue', 'unrescue'];
const STATES = ['pending', 'running', 'complete'];

function upperChoice(value: string, choices: string[], what: string): string {
  const v = value.toLowerCase();
  if (!choices.includes(v)) throw new CliError(`${what} must be one of ${choices.join(', ')} (got "${value}")`, 2);
  return v.toUpperCase();
}

export function registerSessionCommands(program: Command): void {
  const s = program.command('session').description('sessions: one boot, reboot, shutdown, rescue or unrescue of a template over a limit');

  s.command('create')
    .description('start a session (prints its name; --watch follows it to the end)')
    .requiredOption('--template <name>', 'session template')
    .requiredOption('--operation <op>', 'boot, reboot, shutdown, rescue or unrescue (docs/rescue.md)')
    .option('--limit <expr>', 'limit expression (`x1,x2`, `group1,&role`, `!x3`); empty = the whole template')
    .option('--name <name>', 'session name (default: a random UUID)')
    .option('--stage', 'write staged state instead of acting (apply later with apply-staged)')
    .option('--include-disabled', 'include nodes disabled in the inventory')
    .option('--watch', 'show live progress until the session completes (riding out API restarts); exit 1 if it ends with failures')
    .action(
      action(async ({ api, opts, out }) => {
        const input = {
          templateName: opts.template,
          operation: upperChoice(opts.operation, OPERATIONS, '--operation'),
          limit: opts.limit,
          name: opts.name,
          stage: Boolean(opts.stage),
          includeDisabled: Boolean(opts.includeDisabled),
        };
        const r = (
          await api.request(
            `mutation($i: CreateSessionInput!) { createSession(input: $i) { session { ${SESSION_FIELDS} } warnings { field message } } }`,
            { i: input },
          )
        ).createSession;
        for (const w of r.warnings) process.stderr.write(`warning: ${w.field ? `${w.field}: ` : ''}${w.message}\n`);
        if (!opts.watch) {
          if (opts.json) json(out, r.session);
          else
            out.write(
              `session ${r.session.name} created (${r.session.operation.toLowerCase()} of ${r.session.templateName}${r.session.limit ? `, limit ${r.session.limit}` : ''})\n`,
            );
          return 0;
        }
        if (!opts.json) out.write(`session ${r.session.name} created; watching (Ctrl-C stops watching, not the session)\n`);
        return watchSession(api, r.session.name, { out, json: Boolean(opts.json), apiAnswered: true });
      }),
    );

  s.command('watch')
    .description('follow a session live until it completes; exit 1 if it ends with failures')
    .argument('<name>')
    .action(action(async ({ api, opts, out }, name: string) => watchSession(api, name, { out, json: Boolean(opts.json) })));

  s.command('list')
    .description('sessions visible to you, oldest first')
    .option('--status <state>', 'pending, running or complete')
    .option('--min-age <age>', 'started at least this long ago (30m, 12h, 7d)')
    .option('--max-age <age>', 'started at most this long ago')
    .action(
      action(async ({ api, opts, out }) => {
        const vars = {
          status: opts.status ? upperChoice(opts.status, STATES, '--status') : null,
          minAge: opts.minAge ?? null,
          maxAge: opts.maxAge ?? null,
        };
        const r = await api.request(
          `query($status: SessionState, $minAge: String, $maxAge: String) {
        sessions(status: $status, minAge: $minAge, maxAge: $maxAge) { ${SESSION_FIELDS} } }`,
          vars,
        );
        if (opts.json) return json(out, r.sessions);
        table(out, r.sessions as any[], [
          ['NAME', (x) => x.name],
          ['OPERATION', (x) => x.operation.toLowerCase()],
          ['TEMPLATE', (x) => x.templateName],
          ['STATUS', (x) => x.status.status.toLowerCase() + (x.paused ? ' (paused)' : '')],
          ['STARTED', (x) => x.status.startTime],
          ['NODES', (x) => x.components.length],
          ['LIMIT', (x) => x.limit],
          ['ERROR', (x) => x.status.error],
        ]);
      }),
    );

  s.command('get')
    .description('one session')
    .argument('<name>')
    .action(
      action(async ({ api, opts, out }, name: string) => {
        const r = await api.request(`query($n: String!) { session(name: $n) { ${SESSION_FIELDS} } }`, { n: name });
        if (!r.session) throw new CliError(`no session "${name}"`);
        (opts.json ? json : yaml)(out, r.session);
      }),
    );

  s.command('approve')
    .description('approve a session that waits for a second admin (an admin other than its creator)')
    .argument('<name>')
    .action(
      action(async ({ api, opts, out }, name: string) => {
        const r = await api.request(
          `mutation($n: String!) { approveSession(name: $n) { name approval { reason approvedBy approvedAt } } }`,
          {
            n: name,
          },
        );
        if (opts.json) return json(out, r.approveSession);
        out.write(`session ${name} approved by ${r.approveSession.approval.approvedBy}; its setup goes on\n`);
      }),
    );

  s.command('status')
    .description("a session's extended status (exit 1 when it has failed nodes)")
    .argument('<name>')
    .action(
      action(async ({ api, opts, out }, name: string) => {
        const st = (await api.request(`query($n: String!) { sessionStatus(name: $n) { ${STATUS_FIELDS} } }`, { n: name }))
          .sessionStatus as Progress | null;
        if (!st) throw new CliError(`no session "${name}"`);
        const c = counts(st);
        if (opts.json) json(out, st);
        else if (st.status === 'COMPLETE') {
          out.write(
            summaryText({
              session: name,
              error: null,
              succeeded: c.succeeded,
              failed: c.failed,
              staged: c.staged,
              total: c.total,
              duration: st.timing.duration,
              failureReasons: st.failureReasons,
              errorSummary: st.errorSummary,
            }),
          );
        } else {
          out.write(
            `Session ${name} ${st.status.toLowerCase()}${st.paused ? ` (paused: ${st.pauseReason ?? ''})` : ''} for ${st.timing.duration}: ` +
              `${st.phases.percentComplete}% complete (${c.done}/${c.total}), powering off ${c.poweringOff}, powering on ${c.poweringOn}, ` +
              `configuring ${c.configuring}, ${c.deploying ? `deploying ${c.deploying}, ` : ''}failed ${c.failed}\n`,
          );
        }
        return c.failed > 0 ? 1 : 0;
      }),
    );

  s.command('delete')
    .description('delete a session (its nodes keep going)')
    .argument('<name>')
    .action(
      action(async ({ api, out }, name: string) => {
        await api.request('mutation($n: String!) { deleteSession(name: $n) }', { n: name });
        out.write(`session ${name} deleted\n`);
      }),
    );

  // People's controls over a running session.
  for (const verb of ['pause', 'resume', 'abort'] as const) {
    const c = s.command(verb).argument('<name>').description(
      {
        pause: 'stop starting new work for the session (in-flight actions finish; waiting nodes wait)',
        resume: 'continue a paused session (failures so far no longer count against its budget)',
        abort: "leave the session's nodes where they are and disable them with a clear error; the session completes",
      }[verb],
    );
    if (verb === 'pause') c.option('--reason <text>', 'why (shown in the session status)');
    c.action(
      action(async ({ api, opts, out }, name: string) => {
        if (verb === 'abort') {
          const r = (await api.request('mutation($n: String!) { abortSession(name: $n) { stopped } }', { n: name })).abortSession;
          out.write(`session ${name} aborted; ${r.stopped.length} nodes stopped where they were\n`);
          return;
        }
        const q =
          verb === 'pause'
            ? ([
                'mutation($n: String!, $r: String) { pauseSession(name: $n, reason: $r) { paused pauseReason } }',
                { n: name, r: opts.reason ?? null },
              ] as const)
            : (['mutation($n: String!) { resumeSession(name: $n) { paused } }', { n: name }] as const);
        const r = await api.request(q[0], q[1]);
        out.write(
          `session ${name} ${verb === 'pause' ? `paused${r.pauseSession.pauseReason ? ` (${r.pauseSession.pauseReason})` : ''}` : 'resumed'}\n`,
        );
      }),
    );
  }
}
