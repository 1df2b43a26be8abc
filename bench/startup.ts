/**
 * `npx tsx bench/startup.ts [--runs=5] [--roles=api,worker,sim] [--modes=compiled,tsx]`: process start
 * to ready, i.e. from spawn to the first 200 from the role's /healthz, for the compiled output
 * (`node dist/main.js`, after `npm run build`) and for the sources through tsx. Each run is a new
 * process; the api and worker share one fresh database (migrated by the first start, so every run
 * measures a start against a current schema, as a restart does). Prints a Markdown table and the
 * load average before and after, since the machine may be shared.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { ROOT } from '../test/helpers/processes.ts';
import { freshDatabase } from './scale.ts';

const arg = (name: string, d: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d;
const runs = Number(arg('runs', '5'));
const roles = arg('roles', 'api,worker,sim').split(',');
const modes = arg('modes', 'compiled,tsx').split(',');

const ENTRY: Record<string, string[]> = {
  compiled: ['dist/main.js'],
  tsx: ['--import', 'tsx', 'src/main.ts'],
};
const PORT = 4790;

function roleArgs(role: string): string[] {
  if (role === 'worker') return ['worker', '--health-port', String(PORT)];
  if (role === 'sim') return ['sim', '--nodes', '64', '--port', String(PORT)];
  return ['api'];
}

/** CPU milliseconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Start {
  wall: number;
  cpu: number;
}

/**
 * From spawn to the first 200 from /healthz: wall milliseconds, and the CPU milliseconds the process
 * used by then (on a loaded machine the wall time mostly waits for a core; the CPU time does not).
 * The process is stopped afterwards.
 */
async function timeToReady(mode: string, role: string, databaseUrl: string): Promise<Start> {
  const started = performance.now();
  const proc = spawn(process.execPath, [...ENTRY[mode]!, ...roleArgs(role)], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(PORT), LOG_LEVEL: 'warn', BOOTORCH_ADAPTERS: 'sim' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${mode} ${role} exited (${proc.exitCode}): ${err}`);
      if (performance.now() - started > 60_000) throw new Error(`${mode} ${role}: not ready within 60 s: ${err}`);
      const ok = await fetch(`http://127.0.0.1:${PORT}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { wall: performance.now() - started, cpu: cpuMs(proc.pid!) };
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function main() {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL (an admin URL of a PostgreSQL) is required');
  if (modes.includes('compiled') && !fs.existsSync(`${ROOT}/dist/main.js`)) throw new Error('no dist/main.js: run npm run build first');
  const conn = await freshDatabase(adminUrl, 'bootorch_bench_startup');
  const url = conn.url;
  await conn.close();
  const load = os.loadavg();
  const rows: string[] = [];
  for (const role of roles) {
    // One uncounted warm-up per mode (the page cache), then the modes alternate run by run, so a
    // burst of load from elsewhere on a shared machine falls on both.
    const times = new Map(modes.map((m) => [m, [] as Start[]]));
    for (const mode of modes) await timeToReady(mode, role, url);
    for (let i = 0; i < runs; i++) for (const mode of modes) times.get(mode)!.push(await timeToReady(mode, role, url));
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    for (const [mode, starts] of times) {
      const t = starts.map((x) => x.wall);
      const cpu = starts.map((x) => x.cpu);
      rows.push(
        `| ${role} | ${mode} | ${f(median(t))} | ${f(Math.min(...t))} | ${f(Math.max(...t))} | ${f(median(cpu))} | ${t.map(f).join(', ')} |`,
      );
      process.stderr.write(`${rows.at(-1)}\n`);
    }
  }
  const after = os.loadavg();
  const l = (v: number[]) => v.map((x) => x.toFixed(2)).join(' ');
  process.stdout.write(
    [
      `node ${process.version}, ${os.cpus().length} cores, ${runs} runs per row after one warm-up; load average (1/5/15 min) ${l(load)} before, ${l(after)} after`,
      '',
      '| role | run as | median ms | min | max | CPU ms (median) | every run (ms) |',
      '| --- | --- | ---: | ---: | ---: | ---: | --- |',
      ...rows,
      '',
    ].join('\n'),
  );
}

await main();
