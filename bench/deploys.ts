/**
 * `--parts=standalone`, many disk deploys at once: N simulated nodes (default 1,000) booted with a disk
 * deploy each, under the deploy budget (domain/deploy-budget.ts), in one process: the engine with
 * every operator and the simulated deploy agents going through bootorch's own functions
 * (test/helpers/cluster.ts), the image over real HTTP from the simulator's image server
 * (src/sim/image-server.ts), which holds each download to a node's link and all of them together to
 * the uplink. The budget's options are the image server's rates, so its slots are what the uplink
 * carries at link speed. Measured: createSession to the session complete, beside the bound the
 * network sets (image size × nodes / uplink bandwidth), nodes failed, and the most downloads at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { startCluster } from '../test/helpers/cluster.ts';
import { startImageServer } from '../src/sim/image-server.ts';
import { deployBoundSeconds, deploySlots } from '../src/domain/deploy-budget.ts';
import { methodLink, rewriteSection } from './fanout-report.ts';
import { fmt } from './standalone.ts';
import { freshDatabase } from './scale.ts';

export const DEPLOYS_TITLE = '## 8c. Standalone: disk deploys at once, against the network bound';

export interface DeploysResult {
  nodes: number;
  imageBytes: number;
  /** Mbit/s: the uplink (deploy_image_bandwidth) and a node's link (deploy_node_bandwidth). */
  totalMbps: number;
  nodeMbps: number;
  maxConcurrent: number;
  slots: number;
  wallMs: number;
  boundMs: number;
  failed: number;
  active: number;
  /** Downloads in progress at once, at the most (the image server's count). */
  peakDownloads: number;
  load: number;
}

export async function runDeploys(
  adminUrl: string,
  nodes: number,
  o: { imageBytes: number; totalMbps: number; nodeMbps: number; maxConcurrent?: number; log: (m: string) => void },
): Promise<DeploysResult> {
  const image = randomBytes(o.imageBytes);
  const checksum = `sha256:${createHash('sha256').update(image).digest('hex')}`;
  const server = await startImageServer({ nodeMbps: o.nodeMbps, totalMbps: o.totalMbps });
  server.add('disk.img', image);
  const budget = {
    max_concurrent_deploys: o.maxConcurrent ?? 250,
    deploy_image_bandwidth: o.totalMbps,
    deploy_node_bandwidth: o.nodeMbps,
  };
  const name = `bootorch_bench_deploys_${nodes}`;
  const conn = await freshDatabase(adminUrl, name);
  const c = await startCluster({
    db: { ...conn, name, drop: () => conn.close() },
    // Deploy heartbeats as a real agent's, a dead agent after 60 s of silence.
    options: { ...budget, deploy_heartbeat_timeout: 60, max_boot_wait_time: 60 },
    world: { nodes },
  });
  try {
    await c.template('deploys', { deploy: { image: { url: server.url('disk.img'), format: 'raw', checksum } } });
    const load = os.loadavg()[0]!;
    const t0 = performance.now();
    await c.session('deploys', { template: 'deploys', operation: 'boot' });
    await c.waitForSession('deploys', 3_600_000);
    const wallMs = performance.now() - t0;
    const states = (
      await c.db.pool.query<{ state: string; n: number }>('select state, count(*)::int as n from component_deploys group by state')
    ).rows;
    const n = (s: string) => states.find((r) => r.state === s)?.n ?? 0;
    const failed = (await c.db.pool.query<{ n: number }>(`select count(*)::int as n from components where status = 'failed'`)).rows[0]!.n;
    if (failed) o.log(`  deploys: ${failed} failed: ${JSON.stringify(states)}`);
    return {
      nodes,
      imageBytes: o.imageBytes,
      totalMbps: o.totalMbps,
      nodeMbps: o.nodeMbps,
      maxConcurrent: budget.max_concurrent_deploys,
      slots: deploySlots(budget),
      wallMs,
      boundMs: deployBoundSeconds(o.imageBytes, nodes, o.totalMbps) * 1000,
      failed,
      active: n('active'),
      peakDownloads: server.counts().peak,
      load,
    };
  } finally {
    await c.close();
    await server.close();
  }
}

export function deploysSection(rows: DeploysResult[], o: { command: string }): string {
  return [
    DEPLOYS_TITLE,
    '',
    `\`${o.command}\` on ${new Date().toISOString().slice(0, 10)} (the load at the start of each run is in its row); ${methodLink('disk-deploys')}.`,
    '',
    '| nodes | image | uplink / node link (Mbit/s) | budget: max_concurrent_deploys, slots | most downloads at once | deploys complete | bound | time / bound | active / failed | load (1 min) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${fmt(r.nodes)} | ${fmt(r.imageBytes / 2 ** 20, 1)} MiB | ${fmt(r.totalMbps)} / ${fmt(r.nodeMbps)} | ${fmt(r.maxConcurrent)}, ${fmt(r.slots)} | ${fmt(r.peakDownloads)} | ${fmt(r.wallMs)} ms | ${fmt(r.boundMs)} ms | **${fmt(r.wallMs / r.boundMs, 2)}** | ${fmt(r.active)} / ${fmt(r.failed)} | ${r.load.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
}

export function rewriteDeploysSection(md: string): void {
  rewriteSection('BENCHMARKS.md', DEPLOYS_TITLE, md);
}
