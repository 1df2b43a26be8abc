/**
 * `--parts=consoles`: what console capture (src/consoles/capture.ts) costs per node. The capture runs
 * as the worker runs it, against real OpenIPMI ipmi_sim BMCs (one process each, their SOL wired to a
 * serial line this process plays: test/helpers/ipmi-sim.ts SolBmc), registered in a fresh database.
 * `--console-nodes` (20) nodes; each boots once, its serial line printing `--console-boot-bytes`
 * (64 KiB, a verbose kernel and dracut boot) at about a 115200-baud line's pace.
 * Measured: the time until every SOL session is operational; per node, the ipmitool processes, their
 * UDP sockets and memory (RSS and PSS, /proc), the database connections the capture holds, CPU (this
 * process and its live ipmitool children, from /proc) while idle and during the boot, the chunks and
 * bytes stored per boot (the rows' text and the table's size on disk). The BMCs' own CPU (ipmi_sim) is
 * given apart: on a site it is the BMCs'. 10,000 ipmi_sim processes do not fit on this machine beside
 * the rest (bench/ipmi.ts: 1,000 already do not), so the 10,000-node column is the per-node figures
 * multiplied, and says so. Rewrites only its own section of BENCHMARKS.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { ConsoleCapture } from '../src/consoles/capture.ts';
import { seal } from '../src/adapters/standalone/secrets.ts';
import { upsertNodes } from '../src/db/node-inventory.ts';
import { poolOf } from '../src/db/client.ts';
import { SIM_BMC_PASSWORD, SIM_BMC_USER, SolBmc, childrenNamed, ipmitoolChildren } from '../test/helpers/ipmi-sim.ts';
import { freshDatabase } from './scale.ts';
import { rewriteSection } from './fanout-report.ts';
import { measureSshConsoles, SSH_PART_START, sshConsolesSection } from './consoles-ssh.ts';

export const CONSOLES_TITLE = '## Console capture: the cost per node';

const SCALE = 10_000;
/** Clock ticks per second of /proc/PID/stat (USER_HZ, 100 on Linux). */
const TICK = 100;
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const stat = (pid: number): string[] | undefined => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return f.slice(f.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone
  }
};
/** CPU seconds (user + system) of a live process. */
const cpuOf = (pid: number) => {
  const s = stat(pid);
  return s ? (Number(s[11]) + Number(s[12])) / TICK : 0;
};
/** A field of /proc/PID/status or smaps_rollup, in KiB. */
const kib = (pid: number, file: string, field: string) => {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};
const sockets = (pid: number) => {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
      } catch {
        return false;
      }
    }).length;
  } catch {
    return 0;
  }
};
/** CPU seconds now: this process (the capture and its writes), its live ipmitool children, and the BMCs. */
function cpuNow(): { capture: number; ipmitool: number; bmcs: number } {
  const self = process.cpuUsage();
  return {
    capture: (self.user + self.system) / 1e6,
    ipmitool: ipmitoolChildren().reduce((s, p) => s + cpuOf(p), 0),
    bmcs: childrenNamed('ipmi_sim').reduce((s, p) => s + cpuOf(p), 0),
  };
}

async function until(cond: () => boolean | Promise<boolean>, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`consoles bench: ${what} not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A boot's console: kernel-like lines, `bytes` long in all. */
function bootText(node: string, bytes: number): string {
  const lines: string[] = [];
  let n = 0;
  let t = 0;
  while (n < bytes) {
    const l = `[${(t += 0.004).toFixed(6).padStart(12)}] ${node}: probe ${lines.length} ok, dracut-initqueue step ${lines.length % 97}\r\n`;
    lines.push(l);
    n += l.length;
  }
  return lines.join('').slice(0, bytes);
}

export interface ConsolesFigures {
  nodes: number;
  bootBytes: number;
  connectS: number;
  ipmitool: number;
  udpSocketsPerNode: number;
  rssKiBPerNode: number;
  pssKiBPerNode: number;
  pgConnections: number;
  idleCpuMsPerNodeS: number;
  idleIpmitoolCpuMsPerNodeS: number;
  idleBmcCpuMsPerNodeS: number;
  bootS: number;
  bootCpuMsPerNode: number;
  bootIpmitoolCpuMsPerNode: number;
  bootBmcCpuMsPerNode: number;
  chunksPerBoot: number;
  textBytesPerBoot: number;
  diskBytesPerBoot: number;
  reconnects: number;
}

export async function measureConsoles(adminUrl: string, o: { nodes: number; bootBytes: number; log(m: string): void }) {
  const conn = await freshDatabase(adminUrl, 'bootorch_consoles_bench');
  const key = randomBytes(32);
  const bmcs: SolBmc[] = [];
  let capture: ConsoleCapture | undefined;
  try {
    for (let i = 0; i < o.nodes; i++) bmcs.push(await SolBmc.start(`solnode${i}`, i + 1));
    const ids = bmcs.map((_, i) => `x3000c0s${i + 1}b0n0`);
    await upsertNodes(
      conn.db,
      ids.map((id, i) => ({
        id,
        mac: `52:54:00:10:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
        bmcDriver: 'ipmi' as const,
        bmcAddress: bmcs[i]!.address,
        bmcUsername: SIM_BMC_USER,
        bmcSecret: seal(key, id, SIM_BMC_PASSWORD),
      })),
    );
    const db = conn.db;
    const pool = poolOf(db);
    capture = new ConsoleCapture(db, { secretKey: key, log: pino({ level: 'silent' }) });
    const t0 = performance.now();
    capture.start();
    const cap = capture;
    await until(
      () =>
        cap.sessions().length === o.nodes &&
        cap.sessions().every((s) => s.state === 'operational') &&
        ipmitoolChildren().length === o.nodes,
      'every SOL session operational',
      300_000,
    );
    const connectS = (performance.now() - t0) / 1000;
    o.log(`consoles: ${o.nodes} SOL sessions operational in ${fmt(connectS, 1)} s`);

    const pids = ipmitoolChildren();
    const rss = pids.reduce((s, p) => s + kib(p, 'status', 'VmRSS'), 0);
    const pss = pids.reduce((s, p) => s + kib(p, 'smaps_rollup', 'Pss'), 0);
    const udp = pids.reduce((s, p) => s + sockets(p), 0);
    const pgConnections = Number(
      (await pool.query(`select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).rows[0]
        .count,
    );

    const idleS = 10;
    const i0 = cpuNow();
    await new Promise((r) => setTimeout(r, idleS * 1000));
    const i1 = cpuNow();

    const size = async () =>
      (
        await pool.query<{ rows: string; text: string; disk: string }>(
          `select count(*) as rows, coalesce(sum(octet_length(text)), 0) as text, pg_total_relation_size('console_chunks') as disk from console_chunks`,
        )
      ).rows[0]!;
    const before = await size();
    // Each line prints its boot at about a 115200-baud line's pace: 1 KiB every 100 ms.
    const texts = ids.map((id) => bootText(id, o.bootBytes));
    const b0 = cpuNow();
    const tb = performance.now();
    for (let at = 0; at < o.bootBytes; at += 1024) {
      for (let i = 0; i < bmcs.length; i++) bmcs[i]!.write(texts[i]!.slice(at, at + 1024));
      await new Promise((r) => setTimeout(r, 100));
    }
    const stored = async () =>
      Number((await pool.query(`select coalesce(sum(octet_length(text)), 0) as n from console_chunks`)).rows[0].n) - Number(before.text);
    await until(async () => (await stored()) >= o.nodes * o.bootBytes, 'every boot stored', 120_000);
    const bootS = (performance.now() - tb) / 1000;
    const b1 = cpuNow();
    await pool.query('vacuum console_chunks');
    const after = await size();
    const reconnects = cap.sessions().reduce((s, x) => s + x.reconnects, 0);

    return {
      nodes: o.nodes,
      bootBytes: o.bootBytes,
      connectS,
      ipmitool: pids.length,
      udpSocketsPerNode: udp / o.nodes,
      rssKiBPerNode: rss / o.nodes,
      pssKiBPerNode: pss / o.nodes,
      pgConnections,
      idleCpuMsPerNodeS: ((i1.capture - i0.capture) * 1000) / o.nodes / idleS,
      idleIpmitoolCpuMsPerNodeS: ((i1.ipmitool - i0.ipmitool) * 1000) / o.nodes / idleS,
      idleBmcCpuMsPerNodeS: ((i1.bmcs - i0.bmcs) * 1000) / o.nodes / idleS,
      bootS,
      bootCpuMsPerNode: ((b1.capture - b0.capture) * 1000) / o.nodes,
      bootIpmitoolCpuMsPerNode: ((b1.ipmitool - b0.ipmitool) * 1000) / o.nodes,
      bootBmcCpuMsPerNode: ((b1.bmcs - b0.bmcs) * 1000) / o.nodes,
      chunksPerBoot: (Number(after.rows) - Number(before.rows)) / o.nodes,
      textBytesPerBoot: (Number(after.text) - Number(before.text)) / o.nodes,
      diskBytesPerBoot: (Number(after.disk) - Number(before.disk)) / o.nodes,
      reconnects,
    } satisfies ConsolesFigures;
  } finally {
    await capture?.stop();
    await Promise.all(bmcs.map((b) => b.stop()));
    await conn.close();
  }
}

/** The IPMI part of the section: a sentence and the table (the notes are in docs/benchmarks/log/). */
export function consolesSection(f: ConsolesFigures, load: number[]): string {
  const at = (perNode: number, d = 0) => fmt(perNode * SCALE, d);
  const rows: [string, string, string][] = [
    ['ipmitool processes (one `sol activate` each)', fmt(f.ipmitool / f.nodes, 0), at(f.ipmitool / f.nodes)],
    ['sockets held by ipmitool (its UDP session to the BMC among them)', fmt(f.udpSocketsPerNode, 1), at(f.udpSocketsPerNode)],
    ['memory of those processes, RSS (KiB)', fmt(f.rssKiBPerNode), `${at(f.rssKiBPerNode / 1024 / 1024, 1)} GiB`],
    ['memory of those processes, PSS (KiB, shared pages split)', fmt(f.pssKiBPerNode), `${at(f.pssKiBPerNode / 1024 / 1024, 1)} GiB`],
    ['CPU while idle, ipmitool (ms per second)', fmt(f.idleIpmitoolCpuMsPerNodeS, 3), `${at(f.idleIpmitoolCpuMsPerNodeS / 1000, 1)} cores`],
    [
      'CPU while idle, the capture in the worker (ms per second)',
      fmt(f.idleCpuMsPerNodeS, 3),
      `${at(f.idleCpuMsPerNodeS / 1000, 1)} cores`,
    ],
    [
      `CPU for one boot of ${fmt(f.bootBytes / 1024)} KiB, ipmitool (ms)`,
      fmt(f.bootIpmitoolCpuMsPerNode, 1),
      `${at(f.bootIpmitoolCpuMsPerNode / 1000, 0)} CPU s`,
    ],
    [
      `CPU for one boot of ${fmt(f.bootBytes / 1024)} KiB, the capture in the worker (ms)`,
      fmt(f.bootCpuMsPerNode, 1),
      `${at(f.bootCpuMsPerNode / 1000, 0)} CPU s`,
    ],
    ['chunks stored per boot (rows; two statements each)', fmt(f.chunksPerBoot, 1), at(f.chunksPerBoot)],
    ['text stored per boot (bytes)', fmt(f.textBytesPerBoot), `${at(f.textBytesPerBoot / 1024 / 1024, 0)} MiB`],
    ['disk per boot, table and indexes after VACUUM (bytes)', fmt(f.diskBytesPerBoot), `${at(f.diskBytesPerBoot / 1024 / 1024, 0)} MiB`],
  ];
  return `${CONSOLES_TITLE}

\`npm run bench -- --parts=consoles --console-nodes=${f.nodes} --console-boot-bytes=${f.bootBytes}\` (bench/consoles.ts):
the worker's console capture (src/consoles/capture.ts) against ${f.nodes} real OpenIPMI \`ipmi_sim\` BMCs on
this machine, each node's serial line printing one boot of ${fmt(f.bootBytes / 1024)} KiB at about 10 KiB/s (a
115200-baud line). ${os.cpus().length} cores, load ${load.map((l) => fmt(l, 1)).join(' / ')} at the start.
The 10,000-node column is the per-node figure multiplied: 10,000 \`ipmi_sim\` processes do not fit on
this machine beside the rest, so it was **not run at 10,000**.

| per node | measured (${f.nodes} nodes) | × 10,000 nodes |
|---|---:|---:|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}
`;
}

/** The section's current IPMI and SSH parts (a run of one way keeps the other's). */
function currentParts(): { ipmi: string; ssh: string } {
  const md = fs.readFileSync('BENCHMARKS.md', 'utf8');
  const start = md.indexOf(CONSOLES_TITLE);
  if (start < 0) return { ipmi: `${CONSOLES_TITLE}\n\n`, ssh: '' };
  const next = md.indexOf('\n## ', start + CONSOLES_TITLE.length);
  const section = md.slice(start, next < 0 ? undefined : next);
  const cut = section.indexOf(SSH_PART_START);
  return cut < 0 ? { ipmi: section, ssh: '' } : { ipmi: section.slice(0, cut), ssh: section.slice(cut) };
}

/**
 * `--console-way=ipmi` (default) or `ssh` (bench/consoles-ssh.ts: Redfish SerialConsole over SSH, run at
 * `--console-nodes` for real). Each way rewrites its own part of the section.
 */
export async function runConsolesBench(adminUrl: string, o: { nodes: number; bootBytes: number; log(m: string): void }): Promise<void> {
  const load = os.loadavg();
  const way = /^--console-way=(.*)$/.exec(process.argv.find((a) => a.startsWith('--console-way=')) ?? '')?.[1] ?? 'ipmi';
  const parts = currentParts();
  if (way === 'ssh') {
    const f = await measureSshConsoles(adminUrl, o);
    o.log(JSON.stringify(f));
    rewriteSection('BENCHMARKS.md', CONSOLES_TITLE, `${parts.ipmi.trimEnd()}\n\n${sshConsolesSection(f, load).trimEnd()}\n`);
    return;
  }
  const f = await measureConsoles(adminUrl, o);
  o.log(JSON.stringify(f));
  rewriteSection(
    'BENCHMARKS.md',
    CONSOLES_TITLE,
    parts.ssh ? `${consolesSection(f, load).trimEnd()}\n\n${parts.ssh.trimEnd()}\n` : consolesSection(f, load),
  );
}
