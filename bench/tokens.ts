/**
 * `--parts=tokens`: `bootorch token nodes --from-hsm URL --out DIR`, a node credential for every node
 * HSM lists written one file each, at 10,000 and 100,000 nodes (`--token-sizes=`), with `bootorch sim`
 * as HSM. Each size twice on a fresh database: the first issue, and a re-issue (every node's earlier
 * token revoked). With `--before=DIR` (a checkout of earlier code, node_modules linked; the table
 * names its commit) the same commands of DIR run in the same run against the same simulator; above
 * `--before-reissue-max=` nodes (default 10,000: code before bulk issuing reads every token per node)
 * the before's re-issue is left out.
 * Wall time and CPU (user + system) of the CLI process, from /usr/bin/time. Rewrites only its own
 * section of BENCHMARKS.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startRole, ROOT } from '../test/helpers/processes.ts';
import { methodLink, rewriteSection } from './fanout-report.ts';

export const TOKENS_TITLE = '## Node credentials: `bootorch token nodes` at 10,000 and 100,000 nodes';

interface Timed {
  wallS: number;
  cpuS: number;
  out: string;
}

interface Row {
  code: 'before' | 'after';
  nodes: number;
  step: 'issue' | 're-issue';
  t: Timed;
  live: number;
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** The CLI of checkout `cwd`, under /usr/bin/time: wall and CPU seconds. */
function cli(cwd: string, args: string[], env: Record<string, string>): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const p = spawn('/usr/bin/time', ['-f', 'TIME %e %U %S', process.execPath, '--import', 'tsx', 'src/main.ts', ...args], {
      cwd,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      out += d;
    });
    p.on('error', reject);
    p.on('exit', (code) => {
      const m = /TIME (\S+) (\S+) (\S+)/.exec(out);
      if (code !== 0 || !m) return reject(new Error(`bootorch ${args.join(' ')} in ${cwd} exited ${code}:\n${out.slice(-2000)}`));
      resolve({ wallS: Number(m[1]), cpuS: Number(m[2]) + Number(m[3]), out });
    });
  });
}

async function emptyDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function liveNodeTokens(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(`select count(*)::int as n from api_tokens where role = 'node' and revoked_at is null`)).rows[0].n;
  } finally {
    await c.end();
  }
}

export async function runTokensBench(
  adminUrl: string,
  o: { sizes: number[]; before?: string; beforeReissueMax: number; log: (m: string) => void },
): Promise<Row[]> {
  const rows: Row[] = [];
  const load: number[] = [];
  for (const nodes of o.sizes) {
    const sim = startRole('sim', {}, ['--nodes', String(nodes), '--port', '0']);
    try {
      const hsm = (await sim.waitFor(/^export HSM_URL=(\S+)$/m, 300_000))[1]!;
      for (const code of [...(o.before ? (['before'] as const) : []), 'after' as const]) {
        const cwd = code === 'before' ? o.before! : ROOT;
        const url = await emptyDatabase(adminUrl, `bootorch_tokens_${code}_${nodes}`);
        await cli(cwd, ['token', 'list'], { DATABASE_URL: url }); // migrates, untimed
        const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-bench-tokens-'));
        try {
          for (const step of ['issue', 're-issue'] as const) {
            if (code === 'before' && step === 're-issue' && nodes > o.beforeReissueMax) continue;
            o.log(`token nodes, ${code}, ${fmt(nodes)} nodes, ${step}...`);
            load.push(os.loadavg()[0]!);
            const t = await cli(cwd, ['token', 'nodes', '--from-hsm', hsm, '--out', dir], { DATABASE_URL: url });
            const live = await liveNodeTokens(url);
            rows.push({ code, nodes, step, t, live });
            o.log(`  ${fmt(t.wallS, 1)} s wall, ${fmt(t.cpuS, 1)} s CPU, ${fmt(live)} live node tokens`);
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    } finally {
      await sim.stop();
    }
  }
  rewriteSection('BENCHMARKS.md', TOKENS_TITLE, section(rows, o, load));
  return rows;
}

/** The short commit of checkout `dir`, for the table's caption. */
/** The short commit checked out in `dir` ('unknown' when it is not a git checkout). */
export function commitOf(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function section(rows: Row[], o: { sizes: number[]; before?: string; beforeReissueMax: number }, load: number[]): string {
  const after = (nodes: number, step: string) => rows.find((r) => r.code === 'after' && r.nodes === nodes && r.step === step);
  const lines = rows.map((r) => {
    const a = after(r.nodes, r.step)!;
    return `| ${fmt(r.nodes)} | ${r.step} | ${r.code} | ${fmt(r.t.wallS, 1)} s | ${fmt(r.t.cpuS, 1)} s | ${r.code === 'before' ? `${fmt(r.t.wallS / a.t.wallS, 1)}×` : ''} | ${fmt(r.live)} |`;
  });
  const largest = Math.max(...o.sizes);
  const goal = (['issue', 're-issue'] as const).map((step) => {
    const a = after(largest, step);
    return a ? `${step} ${fmt(a.t.wallS, 1)} s (${a.t.wallS < 60 ? 'under' : 'over'} a minute)` : `${step} not run`;
  });
  return `${TOKENS_TITLE}

\`npm run bench -- --parts=tokens --token-sizes=${o.sizes.join(',')}${o.before ? ` --before=DIR --before-reissue-max=${o.beforeReissueMax}` : ''}\` on ${new Date().toISOString().slice(0, 10)}${o.before ? ` (DIR a checkout of ${commitOf(o.before)})` : ''}; load (1 min) ${fmt(Math.min(...load), 1)}–${fmt(Math.max(...load), 1)}; ${methodLink('node-credentials')}.

| nodes | step | code | wall | CPU | before / after | live node tokens after |
|---:|---|---|---:|---:|---:|---:|
${lines.join('\n')}

Goal, ${fmt(largest)} nodes in under a minute: ${goal.join(', ')}.
`;
}
