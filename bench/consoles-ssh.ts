/**
 * `--parts=consoles --console-way=ssh`: what console capture costs per node when the BMCs offer their
 * consoles over SSH (Redfish SerialConsole.SSH; src/consoles/ssh.ts). The capture runs in this process
 * as the worker runs it, against `--console-nodes` simulated BMCs served by farm processes of their own
 * (this file run as a script: src/sim/bmc-farm.ts with `ssh` and one Redfish listener per farm, about
 * 4,000 nodes a farm so that each stays inside this machine's 20,000 descriptors), registered in a fresh
 * database with driver redfish. Each node prints one boot of `--console-boot-bytes` (64 KiB) at about
 * 10 KiB/s: 1 KiB every 100 ms, one shared text. Measured in this process: the time until every session
 * is operational; per node, the sockets it holds, its RSS, CPU while idle and for the boot; the chunks,
 * text and disk (after VACUUM) stored per boot. The farms' CPU is given apart: on a site it is the BMCs'.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { seal } from '../src/adapters/standalone/secrets.ts';
import { ConsoleCapture } from '../src/consoles/capture.ts';
import { poolOf } from '../src/db/client.ts';
import { upsertNodes } from '../src/db/node-inventory.ts';
import { startBmcFarm } from '../src/sim/bmc-farm.ts';
import { setSimBmcLogin } from '../src/sim/http/redfish-inventory.ts';
import { SimWorld } from '../src/sim/world.ts';
import { freshDatabase } from './scale.ts';

const USER = 'root';
const PASSWORD = 'bench-console';
const PER_FARM = 4000;
const TICK = 100;

export interface SshConsolesFigures {
  nodes: number;
  farms: number;
  bootBytes: number;
  connectS: number;
  socketsPerNode: number;
  rssKiBPerNode: number;
  rssMiB: number;
  pgConnections: number;
  idleCpuMsPerNodeS: number;
  idleFarmCpuMsPerNodeS: number;
  /** How long the farms took to print the boot (1 KiB every 100 ms asks for bootBytes / 10 KiB s). */
  printS: number;
  bootS: number;
  bootCpuMsPerNode: number;
  bootFarmCpuMsPerNode: number;
  chunksPerBoot: number;
  textBytesPerBoot: number;
  diskBytesPerBoot: number;
  reconnects: number;
  notOperational: number;
}

const cpuOf = (pid: number) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').slice(0).split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
};
const sockets = () =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:');
    } catch {
      return false; // closed meanwhile
    }
  }).length;
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** A farm process: `ready` with its Redfish origin, then `booted` after each `boot BYTES` line. */
class Farm {
  readonly child: ChildProcess;
  origin = '';
  private readonly waiting: Array<(l: Record<string, unknown>) => void> = [];

  constructor(nodes: number, from: number, to: number) {
    this.child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), String(nodes), String(from), String(to)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    readline.createInterface({ input: this.child.stdout! }).on('line', (l) => {
      if (l.startsWith('{')) this.waiting.shift()?.(JSON.parse(l) as Record<string, unknown>);
    });
  }

  next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.waiting.push(resolve);
      this.child.once('exit', (code) => reject(new Error(`console farm exited ${code}`)));
    });
  }

  async send(line: string): Promise<Record<string, unknown>> {
    const answer = this.next();
    this.child.stdin!.write(`${line}\n`);
    return answer;
  }
}

async function until(cond: () => boolean | Promise<boolean>, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`consoles bench (ssh): ${what} not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function measureSshConsoles(
  adminUrl: string,
  o: { nodes: number; bootBytes: number; log(m: string): void },
): Promise<SshConsolesFigures> {
  const conn = await freshDatabase(adminUrl, 'bootorch_consoles_ssh_bench');
  const key = randomBytes(32);
  const world = new SimWorld({ nodes: o.nodes });
  const ids = world.ids();
  world.close();
  const farms: Farm[] = [];
  let capture: ConsoleCapture | undefined;
  try {
    for (let from = 0; from < o.nodes; from += PER_FARM) farms.push(new Farm(o.nodes, from, Math.min(from + PER_FARM, o.nodes)));
    const ready = await Promise.all(farms.map((f) => f.next()));
    ready.forEach((r, i) => {
      farms[i]!.origin = String(r.origin);
    });
    const farmOf = (i: number) => farms[Math.floor(i / PER_FARM)]!;
    await upsertNodes(
      conn.db,
      ids.map((id, i) => ({
        id,
        mac: `52:54:01:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
        bmcDriver: 'redfish' as const,
        bmcAddress: `${farmOf(i).origin}/redfish/v1/Systems/${id}`,
        bmcUsername: USER,
        bmcSecret: seal(key, id, PASSWORD),
      })),
    );
    const pool = poolOf(conn.db);
    const farmCpu = () => farms.reduce((s, f) => s + cpuOf(f.child.pid!), 0);
    const sockets0 = sockets();
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    capture = new ConsoleCapture(conn.db, { secretKey: key, log: pino({ level: 'warn' }), redfishOptions: { timeoutMs: 30_000 } });
    const cap = capture;
    const t0 = performance.now();
    capture.start();
    const operational = () => cap.sessions().filter((s) => s.state === 'operational').length;
    let last = 0;
    await until(
      () => {
        const n = operational();
        if (n - last >= 1000) o.log(`consoles (ssh): ${(last = n)} operational after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        return n === o.nodes;
      },
      'every SSH session operational',
      900_000,
    );
    const connectS = (performance.now() - t0) / 1000;
    o.log(`consoles (ssh): ${o.nodes} sessions operational in ${connectS.toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, 3000));
    global.gc?.();
    const rss = process.memoryUsage().rss;
    const held = sockets() - sockets0;
    const pgConnections = Number(
      (await pool.query(`select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).rows[0]
        .count,
    );

    const idleS = 20;
    const i0 = { self: selfCpu(), farm: farmCpu() };
    await new Promise((r) => setTimeout(r, idleS * 1000));
    const i1 = { self: selfCpu(), farm: farmCpu() };

    const size = async () =>
      (
        await pool.query<{ rows: string; text: string; disk: string }>(
          `select count(*) as rows, coalesce(sum(octet_length(text)), 0) as text, pg_total_relation_size('console_chunks') as disk from console_chunks`,
        )
      ).rows[0]!;
    const before = await size();
    const b0 = { self: selfCpu(), farm: farmCpu() };
    const tb = performance.now();
    await Promise.all(farms.map((f) => f.send(`boot ${o.bootBytes}`)));
    const printS = (performance.now() - tb) / 1000;
    o.log(`consoles (ssh): the farms printed the boot in ${printS.toFixed(1)} s`);
    const stored = async () =>
      Number((await pool.query(`select coalesce(sum(octet_length(text)), 0) as n from console_chunks`)).rows[0].n) - Number(before.text);
    await until(async () => (await stored()) >= o.nodes * o.bootBytes, 'every boot stored', 900_000);
    const bootS = (performance.now() - tb) / 1000;
    const b1 = { self: selfCpu(), farm: farmCpu() };
    await pool.query('vacuum console_chunks');
    const after = await size();
    const sessions = cap.sessions();
    return {
      nodes: o.nodes,
      farms: farms.length,
      bootBytes: o.bootBytes,
      connectS,
      socketsPerNode: held / o.nodes,
      rssKiBPerNode: (rss - rss0) / 1024 / o.nodes,
      rssMiB: rss / 1024 / 1024,
      pgConnections,
      idleCpuMsPerNodeS: ((i1.self - i0.self) * 1000) / o.nodes / idleS,
      idleFarmCpuMsPerNodeS: ((i1.farm - i0.farm) * 1000) / o.nodes / idleS,
      printS,
      bootS,
      bootCpuMsPerNode: ((b1.self - b0.self) * 1000) / o.nodes,
      bootFarmCpuMsPerNode: ((b1.farm - b0.farm) * 1000) / o.nodes,
      chunksPerBoot: (Number(after.rows) - Number(before.rows)) / o.nodes,
      textBytesPerBoot: (Number(after.text) - Number(before.text)) / o.nodes,
      diskBytesPerBoot: (Number(after.disk) - Number(before.disk)) / o.nodes,
      reconnects: sessions.reduce((s, x) => s + x.reconnects, 0),
      notOperational: sessions.filter((s) => s.state !== 'operational').length,
    };
  } finally {
    await capture?.stop();
    for (const f of farms) f.child.kill('SIGTERM');
    await conn.close();
  }
}

/** The first words of the SSH part of BENCHMARKS.md's console section (bench/consoles.ts keeps it on an IPMI run). */
export const SSH_PART_START = '`npm run bench -- --parts=consoles --console-way=ssh';

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** The SSH part: a sentence and the table. */
export function sshConsolesSection(f: SshConsolesFigures, load: number[]): string {
  const all = (perNode: number, d = 0) => fmt(perNode * f.nodes, d);
  const rows: [string, string, string][] = [
    ['processes', '0', '0 (in the worker)'],
    ['sockets held by the capture (its SSH connection)', fmt(f.socketsPerNode, 2), all(f.socketsPerNode)],
    ['memory of the capturing process, RSS growth (KiB)', fmt(f.rssKiBPerNode, 1), `${fmt(f.rssMiB)} MiB in all`],
    ['CPU while idle, the capture (ms per second)', fmt(f.idleCpuMsPerNodeS, 4), `${all(f.idleCpuMsPerNodeS / 1000, 2)} cores`],
    [
      `CPU for one boot of ${fmt(f.bootBytes / 1024)} KiB, the capture (ms)`,
      fmt(f.bootCpuMsPerNode, 1),
      `${all(f.bootCpuMsPerNode / 1000, 0)} CPU s`,
    ],
    ['chunks stored per boot (rows)', fmt(f.chunksPerBoot, 1), all(f.chunksPerBoot)],
    ['text stored per boot (bytes)', fmt(f.textBytesPerBoot), `${all(f.textBytesPerBoot / 1024 / 1024, 0)} MiB`],
    ['disk per boot, table and indexes after VACUUM (bytes)', fmt(f.diskBytesPerBoot), `${all(f.diskBytesPerBoot / 1024 / 1024, 0)} MiB`],
  ];
  return `${SSH_PART_START} --console-nodes=${f.nodes} --console-boot-bytes=${f.bootBytes}\` (bench/consoles-ssh.ts): the same
capture against ${fmt(f.nodes)} simulated BMCs offering \`SerialConsole.SSH\` (an ssh2 server each, in ${f.farms} farm processes),
run at ${fmt(f.nodes)} for real; every session operational ${fmt(f.connectS, 1)} s after the start. The boot (1 KiB every 100 ms
asked, ${fmt(f.bootBytes / 10240, 1)} s) took the farms ${fmt(f.printS, 1)} s to print and was stored for every node ${fmt(f.bootS, 1)} s after it
began; load ${load.map((l) => fmt(l, 1)).join(' / ')} at the start.
The BMC side (the farms) used ${fmt(f.idleFarmCpuMsPerNodeS, 4)} ms per node-second idle and ${fmt(f.bootFarmCpuMsPerNode, 1)} ms per boot, not counted below
([notes](docs/benchmarks/log/consoles-ssh.md)).

| per node | measured (${fmt(f.nodes)} nodes) | all ${fmt(f.nodes)} |
|---|---:|---:|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}
`;
}

/** The farm process: nodes [from, to) of a world of `nodes`, each with its SSH console. */
async function farmMain(nodes: number, from: number, to: number): Promise<void> {
  const world = new SimWorld({ nodes });
  setSimBmcLogin(world, { username: USER, password: PASSWORD });
  const ids = world.ids().slice(from, to);
  const farm = await startBmcFarm(world, { ids, ssh: true, redfish: 'shared' });
  const origin = new URL(farm.url(ids[0]!)).origin;
  process.stdout.write(`${JSON.stringify({ origin })}\n`);
  readline.createInterface({ input: process.stdin }).on('line', async (l) => {
    const [cmd, arg] = l.split(' ');
    if (cmd !== 'boot') return;
    const text = bootText(Number(arg));
    // 1 KiB every 100 ms to every node's console (a 115200-baud line's pace), from one shared text.
    for (let at = 0; at < text.length; at += 1024) {
      const t = performance.now();
      const part = text.slice(at, at + 1024);
      for (const id of ids) farm.consoles!.write(id, part);
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - t))));
    }
    process.stdout.write(`${JSON.stringify({ booted: true })}\n`);
  });
  process.on('SIGTERM', () => void farm.close().finally(() => process.exit(0)));
}

/** A boot's console: kernel-like lines, `bytes` long in all. */
function bootText(bytes: number): string {
  const lines: string[] = [];
  let n = 0;
  let t = 0;
  while (n < bytes) {
    const l = `[${(t += 0.004).toFixed(6).padStart(12)}] probe ${lines.length} ok, dracut-initqueue step ${lines.length % 97}\r\n`;
    lines.push(l);
    n += l.length;
  }
  return lines.join('').slice(0, bytes);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [nodes, from, to] = process.argv.slice(2).map(Number) as [number, number, number];
  void farmMain(nodes, from, to);
}
