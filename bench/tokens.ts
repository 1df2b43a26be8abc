/**
 * `--parts=tokens`: `bootorch token nodes --from-hsm URL --out DIR`, a node credential for every node
 * HSM lists written one file each, at 10,000 and 100,000 nodes (`--token-sizes=`), with `bootorch sim`
 * as HSM. Each size twice on a fresh database: the first issue, and a re-issue (every node's earlier
 * token revoked). With `--before=DIR` (a checkout of the code before bulk issuing, node_modules linked)
 * the same commands of DIR run in the same run against the same simulator; at 100,000 nodes the
 * before's re-issue is left out (`--before-reissue-max=`, default 10,000: it reads every token per node).
 * Wall time and CPU (user + system) of the CLI process, from /usr/bin/time. Rewrites only its own
 * section of BENCHMARKS.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startRole, ROOT } from '../test/helpers/processes.ts';
import { rewriteSection } from './fanout-report.ts';

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

function section(rows: Row[], o: { sizes: number[]; before?: string }, load: number[]): string {
  const after = (nodes: number, step: string) => rows.find((r) => r.code === 'after' && r.nodes === nodes && r.step === step);
  const lines = rows.map((r) => {
    const a = after(r.nodes, r.step)!;
    return `| ${fmt(r.nodes)} | ${r.step} | ${r.code} | ${fmt(r.t.wallS, 1)} s | ${fmt(r.t.cpuS, 1)} s | ${r.code === 'before' ? `${fmt(r.t.wallS / a.t.wallS, 1)}×` : ''} | ${fmt(r.live)} |`;
  });
  return `${TOKENS_TITLE}

The last run: \`npm run bench -- --parts=tokens --token-sizes=${o.sizes.join(',')}${o.before ? ' --before=DIR' : ''}\` (bench/tokens.ts;
DIR a checkout of the code before bulk issuing, issuing one node per transaction, four at a time).
\`bootorch token nodes --from-hsm URL --out DIR\` with \`bootorch sim\` as HSM, one file per node, on a
fresh database: the first issue, then a re-issue that revokes every node's earlier token. The process
as a whole (start, migrations check, HSM read, database, files), wall and CPU from /usr/bin/time.
Load (1 min) during the run: ${fmt(Math.min(...load), 1)}–${fmt(Math.max(...load), 1)}.

| nodes | step | code | wall | CPU | before / after | live node tokens after |
|---:|---|---|---:|---:|---:|---:|
${lines.join('\n')}

Now each thousand nodes are one transaction of two statements (revoke their earlier tokens, insert
the new ones), and a partial index on the live node tokens' subjects finds the earlier ones; before,
each node was a transaction of its own whose revocation read every token in the table. The stored
form is unchanged: SHA-256 of a 256-bit random token (src/auth/api-tokens.ts).
`;
}
