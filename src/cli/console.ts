/**
 * `bootorch console NODE [--follow]`: a node's kept serial console (nodeConsole). Without --follow it
 * prints the newest boot attempt (or --attempt's), its last --lines, or the lines matching --search,
 * and exits; with --follow it then prints what the console writes as it arrives, across the node's
 * next boot attempts (a line names each new attempt), until interrupted. --attempts lists the kept ones.
 */
import type { Command } from 'commander';
import { CliError } from './client.ts';
import { json, table } from './output.ts';
import { action } from './run.ts';

const QUERY = `query($id: ID!, $attempt: DateTime, $after: String, $lines: Int, $search: String) {
  nodeConsole(componentId: $id, attempt: $attempt, after: $after, lines: $lines, search: $search) {
    componentId attempt text cursor attempts { attempt bytes first last } } }`;

interface Answer {
  componentId: string;
  attempt: string;
  text: string;
  cursor: string;
  attempts: Array<{ attempt: string; bytes: number; first: string; last: string }>;
}

const positive = (name: string, v: unknown): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${name} must be a whole number above 0`, 2);
  return n;
};

export function registerConsoleCommands(program: Command): void {
  program
    .command('console')
    .description("a node's serial console as bootorch keeps it (IPMI SOL); --follow prints what comes next")
    .argument('<xname>')
    .option('--follow', 'keep printing what the console writes, across the next boot attempts, until interrupted')
    .option('--attempt <time>', 'the boot attempt (its power-on time, as --attempts lists it); default the newest')
    .option('--lines <n>', 'only the last N lines')
    .option('--search <text>', 'only the lines containing this text (case-insensitive)')
    .option('--attempts', 'list the kept boot attempts instead')
    .option('--interval <seconds>', 'with --follow: how often to ask, seconds (default 1)', '1')
    .action(
      action(async ({ api, opts, out }, id: string) => {
        const lines = positive('--lines', opts.lines);
        const interval = Number(opts.interval);
        if (!(interval >= 0.1)) throw new CliError('--interval must be at least 0.1', 2);
        const ask = async (v: Record<string, unknown>): Promise<Answer | null> =>
          (await api.request(QUERY, { id, ...v })).nodeConsole as Answer | null;
        const first = await ask({ attempt: opts.attempt, lines, search: opts.search });
        if (!first && !opts.follow) throw new CliError(`no console kept for "${id}"`);
        if (opts.attempts) {
          if (opts.json) return json(out, first?.attempts ?? []);
          table(out, first?.attempts ?? [], [
            ['ATTEMPT', (a) => a.attempt],
            ['BYTES', (a) => a.bytes],
            ['FIRST', (a) => a.first],
            ['LAST', (a) => a.last],
          ]);
          return;
        }
        if (opts.json && !opts.follow) return json(out, first);
        let attempt = first?.attempt;
        let cursor = first?.cursor ?? '0';
        if (first) out.write(opts.json ? `${JSON.stringify({ attempt, text: first.text })}\n` : first.text);
        if (!opts.follow) return;
        let stop = false;
        const end = () => {
          stop = true;
        };
        process.once('SIGINT', end);
        process.once('SIGTERM', end);
        while (!stop) {
          await new Promise((r) => setTimeout(r, interval * 1000));
          if (stop) break;
          const next = await ask({ after: cursor, search: opts.search });
          if (!next || next.cursor === cursor) continue;
          if (next.attempt !== attempt && !opts.json) out.write(`\n--- boot attempt ${next.attempt} ---\n`);
          attempt = next.attempt;
          cursor = next.cursor;
          out.write(opts.json ? `${JSON.stringify({ attempt, text: next.text })}\n` : next.text);
        }
      }),
    );
}
