/**
 * `--parts=bmc`: a reboot in standalone mode over Redfish, undisturbed and with 1 % of the BMCs broken,
 * in the same run: the nodes' power goes through the standalone adapter (guard, circuits, the pass's
 * wait) to a farm of simulated BMCs, one HTTP listener per node (src/sim/bmc-farm.ts); inventory, boot
 * parameters and configuration are the simulator's, in process, as in section 1–2. Faults (src/sim
 * faults): dead (takes the connection, never answers: the 15 s per-call timeout), refusing (the
 * listener is closed: connection refused) and slow (answers after 10 s). Each broken case runs in its
 * own process, started together with an undisturbed twin in another, so that both meet the same
 * machine (a shared two-core machine's load moves a lone run by more than the 10 % this is about).
 * Measured: when the healthy nodes (the other 99 %) are all done, against the twin; the status passes'
 * duration (ticks of the status operator) and power-status's. Rewrites only its own section of BENCHMARKS.md.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { freshDatabase, INSTANT } from './scale.ts';
import { loadText, methodLink, rewriteSection } from './fanout-report.ts';
import { SimWorld } from '../src/sim/world.ts';
import { startBmcFarm, type BmcFarm } from '../src/sim/bmc-farm.ts';
import { createSimAdapters } from '../src/adapters/factory.ts';
import { NodeRegistry } from '../src/adapters/standalone/registry.ts';
import { StandalonePower } from '../src/adapters/standalone/power.ts';
import { RedfishClient } from '../src/adapters/standalone/redfish.ts';
import { IpmiTool } from '../src/adapters/standalone/ipmi.ts';
import { BmcGuard } from '../src/adapters/standalone/bmc-guard.ts';
import { startEngine } from '../src/engine/runtime.ts';
import { createOperators } from '../src/operators/index.ts';
import { createReportBatcher } from '../src/engine/reports.ts';
import type { OperatorDef } from '../src/engine/operator.ts';
import type { PowerPort } from '../src/adapters/ports.ts';

export const BMC_TITLE = '## 7. BMC protection: a reboot with broken BMCs';

type Fault = 'none' | 'dead' | 'refusing' | 'slow';
const FAULTS: Fault[] = ['none', 'dead', 'refusing', 'slow'];
const WORDS: Record<Fault, string> = {
  none: 'undisturbed',
  dead: '1 % dead (no answer)',
  refusing: '1 % refusing connections',
  slow: '1 % answering after 10 s',
};

interface Run {
  fault: Fault;
  /** createSession to the last healthy node done, and to the median one. */
  healthyMs: number;
  medianMs: number;
  passes: number[];
  reads: number[];
  /** The broken nodes when the healthy ones were done: done, failed, still at it. */
  broken: { done: number; failed: number; waiting: number };
  load: number;
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const median = (xs: number[]) => pct(xs, 50);

async function reboot(adminUrl: string, nodes: number, fault: Fault, tag: string): Promise<Run> {
  const conn = await freshDatabase(adminUrl, `bootorch_bmc_${tag}`);
  await conn.pool.query('insert into options (id, data) values (1, $1)', [
    JSON.stringify({ polling_frequency: 15, max_component_batch_size: 2800 }),
  ]);
  const world = new SimWorld({ nodes, seed: 7, initial: { booted: true, desiredConfig: 'compute-cfg' }, ...INSTANT });
  const ids = world.ids();
  const broken = new Set(fault === 'none' ? [] : ids.filter((_, i) => i % 100 === 50));
  const healthy = ids.filter((id) => !broken.has(id));
  let farm: BmcFarm | undefined;
  try {
    farm = await startBmcFarm(world);
    const key = randomBytes(32);
    const registered = await new NodeRegistry(key).register(
      conn.db,
      ids.map((id, i) => ({
        xname: id,
        mac: `02:00:00:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
        bmc: { driver: 'redfish', address: farm!.url(id), username: 'root', password: 'calvin' },
      })),
    );
    if (!registered.ok) throw new Error(`registering the nodes: ${JSON.stringify(registered.errors.slice(0, 3))}`);
    if (fault === 'dead') world.faults.setNodes('bmcDead', broken);
    if (fault === 'slow') {
      world.faults.setNodes('bmcSlow', broken);
      world.faults.setBmc({ slowMs: 10_000 });
    }
    for (const id of fault === 'refusing' ? broken : []) await farm.unplug(id);

    // The site's defaults: 15 s per call, the pass waits 2 s at most, 64 calls at once, circuits after 3 failures.
    const power = new StandalonePower(conn.db, {
      drivers: { ipmi: new IpmiTool(), redfish: new RedfishClient({ timeoutMs: 15_000 }) },
      secretKey: key,
      guard: new BmcGuard(),
      passWaitMs: 2000,
    });
    const reads: number[] = [];
    const passes: number[] = [];
    let measuring = false;
    const timedPower: PowerPort = {
      async powerStatus(list) {
        const t = performance.now();
        try {
          return await power.powerStatus(list);
        } finally {
          if (measuring) reads.push(performance.now() - t);
        }
      },
      transition: (op, list) => power.transition(op, list),
      getTransition: (id) => power.getTransition(id),
      bootFromDisk: (list) => power.bootFromDisk(list),
    };
    const adapters = { ...createSimAdapters(world), power: timedPower };
    const operators: OperatorDef[] = createOperators().map((op) =>
      op.name !== 'status'
        ? op
        : {
            ...op,
            async run(ctx) {
              const t = performance.now();
              try {
                await op.run(ctx);
              } finally {
                if (measuring) passes.push(performance.now() - t);
              }
            },
          },
    );
    await conn.pool.query(`insert into components (id, last_action) select unnest($1::text[]), 'newly_discovered'`, [ids]);
    await conn.pool.query(`insert into session_templates (name, cfs_configuration, boot_sets) values ('t', 'compute-cfg', $1)`, [
      JSON.stringify({ compute: { path: world.defaultImage.manifest, type: 's3', arch: 'X86', node_roles_groups: ['Compute'] } }),
    ]);
    const engine = await startEngine({
      url: conn.url,
      db: conn.db,
      adapters,
      operators,
      log: pino({ level: process.env.BENCH_LOG ?? 'silent' }),
    });
    const batcher = createReportBatcher(conn.db, engine.scheduler);
    world.setReportHandler(async (id, token) => {
      const r = await batcher.report({ id, token, actor: `node:${id}` });
      if (!r.ok) throw new Error(r.message);
    });
    await new Promise((r) => setTimeout(r, 1500));
    measuring = true;
    const t0 = performance.now();
    await conn.pool.query(`insert into sessions (name, operation, template_name) values ('bench', 'reboot', 't')`);
    await engine.scheduler.kick(conn.db, ['session-setup']);
    // A node is done when it is disabled, stable and has reported the token of this reboot's boot parameters.
    const doneAt = new Map<string, number>();
    const deadline = Date.now() + 10 * 60_000;
    while (doneAt.size < healthy.length) {
      if (Date.now() > deadline) throw new Error(`${WORDS[fault]}: ${healthy.length - doneAt.size} healthy nodes not done in 10 minutes`);
      const r = await conn.pool.query<{ id: string }>(
        `select id from components where not enabled and status = 'stable' and desired_bss_token <> ''
          and actual_bss_token = desired_bss_token and id = any($1::text[])`,
        [healthy.filter((id) => !doneAt.has(id))],
      );
      const now = performance.now() - t0;
      for (const { id } of r.rows) doneAt.set(id, now);
      if (doneAt.size < healthy.length) await new Promise((res) => setTimeout(res, 20));
    }
    measuring = false;
    const finish = [...doneAt.values()];
    const b = (
      await conn.pool.query<{ done: number; failed: number; waiting: number }>(
        `select count(*) filter (where not enabled and status = 'stable')::int as done,
          count(*) filter (where status = 'failed')::int as failed,
          count(*) filter (where enabled and status <> 'failed')::int as waiting
        from components where id = any($1::text[])`,
        [[...broken]],
      )
    ).rows[0]!;
    await engine.stop();
    await power.idle();
    return { fault, healthyMs: Math.max(...finish), medianMs: median(finish), passes, reads, broken: b, load: os.loadavg()[0]! };
  } finally {
    await farm?.close();
    world.close();
    await conn.close();
  }
}

/** One reboot in a process of its own (this file run as a script), its Run as the last line of its output. */
function inChild(adminUrl: string, nodes: number, fault: Fault, tag: string): Promise<Run> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), adminUrl, String(nodes), fault, tag],
      { maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 },
      (err, stdout, stderr) => {
        const last = stdout.trim().split('\n').at(-1) ?? '';
        if (err || !last.startsWith('{')) reject(new Error(`${WORDS[fault]}: ${err?.message ?? ''}\n${stderr.slice(-2000)}`));
        else resolve(JSON.parse(last) as Run);
      },
    ),
  );
}

const line = (r: Run) =>
  `${WORDS[r.fault]}: healthy done ${Math.round(r.healthyMs)} ms (median node ${Math.round(r.medianMs)} ms); status passes ${r.passes.length}: ${r.passes.map(Math.round).join(' ')} ms; power-status ${r.reads.map(Math.round).join(' ')} ms; broken done/failed/waiting ${r.broken.done}/${r.broken.failed}/${r.broken.waiting}`;

export async function runBmcBench(adminUrl: string, o: { nodes: number; reps: number; log: (m: string) => void }): Promise<void> {
  const load = os.loadavg();
  const pairs: Array<[Run, Run]> = [];
  const broken = FAULTS.filter((f) => f !== 'none');
  for (let rep = 0; rep < o.reps; rep++) {
    for (const fault of rep % 2 ? [...broken].reverse() : broken) {
      o.log(`bmc: reboot of ${o.nodes} nodes over Redfish, ${WORDS[fault]}, beside an undisturbed twin (run ${rep + 1} of ${o.reps})...`);
      const pair = await Promise.all([
        inChild(adminUrl, o.nodes, 'none', `none_${fault}_${rep}`),
        inChild(adminUrl, o.nodes, fault, `${fault}_${rep}`),
      ]);
      pairs.push(pair);
      o.log(`  ${line(pair[1])}\n  ${line(pair[0])}\n  ratio ${(pair[1].healthyMs / pair[0].healthyMs).toFixed(2)}`);
    }
  }
  rewriteSection('BENCHMARKS.md', BMC_TITLE, section(pairs, o.nodes, o.reps, load));
}

// Run as a script: one reboot (bench/bmc.ts ADMIN_URL NODES FAULT TAG), its Run printed as JSON.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [adminUrl, nodes, fault, tag] = process.argv.slice(2) as [string, string, Fault, string];
  reboot(adminUrl, Number(nodes), fault, tag).then(
    (r) => {
      process.stdout.write(`${JSON.stringify(r)}\n`);
      process.exit(0);
    },
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(1);
    },
  );
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function section(pairs: Array<[Run, Run]>, nodes: number, reps: number, load: number[]): string {
  const row = (what: string, rs: Run[], twins?: Run[]) => {
    const passes = rs.flatMap((r) => r.passes);
    const reads = rs.flatMap((r) => r.reads);
    const ratios = twins ? rs.map((r, i) => r.healthyMs / twins[i]!.healthyMs) : [];
    const last = rs.at(-1)!;
    return `| ${what} | ${fmt(median(rs.map((r) => r.healthyMs)))} ms; ${rs.map((r) => fmt(r.healthyMs)).join(', ')} | ${twins ? `${fmt(median(twins.map((r) => r.healthyMs)))} ms; ${twins.map((r) => fmt(r.healthyMs)).join(', ')}` : '–'} | ${twins ? `${fmt(median(ratios), 2)}; ${ratios.map((x) => fmt(x, 2)).join(', ')}` : '–'} | ${fmt(median(rs.map((r) => r.medianMs)))} ms | ${rs.map((r) => r.passes.length).join(', ')} | ${fmt(pct(passes, 50))} / ${fmt(pct(passes, 99))} / ${fmt(Math.max(...passes))} ms | ${fmt(pct(reads, 99))} / ${fmt(Math.max(...reads))} ms | ${twins ? `${last.broken.done} / ${last.broken.failed} / ${last.broken.waiting}` : '–'} | ${rs.map((r) => r.load.toFixed(1)).join(', ')} |`;
  };
  return [
    BMC_TITLE,
    '',
    `\`npm run bench -- --parts=bmc${reps !== 2 ? ` --reps=${reps}` : ''}${nodes !== 1000 ? ` --bmc-nodes=${nodes}` : ''}\` on ${new Date().toISOString().slice(0, 10)}; load ${loadText(load)}; ${fmt(nodes)} nodes, every 100th BMC broken, ${reps} pair${reps > 1 ? 's' : ''} per case; ${methodLink('bmc-protection')}.`,
    '',
    '| BMCs | healthy nodes done (median; runs) | undisturbed twin (median; runs) | against the twin (median; runs) | median node done | status passes (per run) | status pass p50 / p99 / max | power-status p99 / max | broken nodes then: done / failed / waiting | load (1 min) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    row(
      'undisturbed (every twin)',
      pairs.map((p) => p[0]),
    ),
    ...FAULTS.filter((f) => f !== 'none').map((f) => {
      const ps = pairs.filter((p) => p[1].fault === f);
      return row(
        WORDS[f],
        ps.map((p) => p[1]),
        ps.map((p) => p[0]),
      );
    }),
    '',
  ].join('\n');
}
