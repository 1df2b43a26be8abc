/**
 * `bootorch sim`: the simulated cluster as a server (HSM, PCS, BSS, CFS v3 and S3 on one port), its
 * nodes reporting to bootorch over HTTP with their own credentials. Prints the environment for
 * `BOOTORCH_ADAPTERS=http` api/worker processes, one line per service.
 *
 * `bootorch reporter`: the node agent (src/reporter/agent.ts) as a long-running process on a booted
 * node: identity from NODE_IDENTITY or the kernel command line, credential from BOOTORCH_TOKEN or
 * BOOTORCH_TOKEN_FILE (re-read before every report).
 */
import { writeFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { Config } from '../config.ts';
import { agentConfigFromEnv, graphqlUrl, startReporterAgent } from '../reporter/agent.ts';
import { applyFaults, type SimFaultsChange } from '../sim/http/control.ts';
import { reportTokenSource } from '../sim/report-tokens.ts';
import { FAST_TIMING, INSTANT_TIMING, INTERACTIVE_TIMING, startSimRole } from '../sim/role.ts';
import { BMC_PASSWORD_ENV, MAX_STANDALONE_NODES } from '../sim/standalone.ts';
import { NODE_FAULTS, SIM_SERVICES, type NodeFault, type SimService } from '../sim/types.ts';
import type { WorldOptions } from '../sim/world.ts';
import { startProcessMetrics } from '../observability/metrics.ts';

interface Stoppable {
  stop(): Promise<void>;
}

const TIMINGS: Record<string, WorldOptions> = { interactive: INTERACTIVE_TIMING, fast: FAST_TIMING, instant: INSTANT_TIMING };
const INITIAL: Record<string, WorldOptions['initial']> = {
  booted: { booted: true, desiredConfig: 'compute-cfg', configured: true },
  on: { power: 'on' },
  off: { power: 'off' },
};

function int(name: string, min: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
    return n;
  };
}

function fraction(v: string): number {
  const n = Number(v);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be a fraction between 0 and 1');
  return n;
}

/**
 * `--fault` values, repeatable: a node fault by rate (`neverPowersOn=0.02`) or by xnames
 * (`ignoresSoftOff=x1000c0s0b0n0,x1000c0s0b0n1`), or a service fault (`pcs:down`, `bss:timeout`,
 * `cfs:failRate=0.2`, `hsm:slowMs=500`), or how the BMC faults behave (`bmc:slowMs=10000`,
 * `bmc:busyStatus=429`, `bmc:retryAfter=2`, `bmc:busyRate=0.5`; the nodes with them are node faults:
 * `bmcSlow=0.01`, `bmcBusy=x1000c0s0b0n0`).
 */
export function parseFault(spec: string, prev: SimFaultsChange = {}): SimFaultsChange {
  const out: SimFaultsChange = { ...prev, services: { ...prev.services }, nodes: { ...prev.nodes }, rates: { ...prev.rates } };
  const bmc = /^bmc:(slowMs|busyStatus|retryAfter|busyRate)=(.+)$/.exec(spec);
  if (bmc) {
    const [, knob, value] = bmc;
    const v = knob === 'busyRate' ? fraction(value!) : int(knob!, 0)(value!);
    if (knob === 'busyStatus' && v !== 429 && v !== 503) throw new InvalidArgumentError('bmc:busyStatus must be 429 or 503');
    return { ...out, bmc: { ...prev.bmc, [knob!]: v } };
  }
  const svc = /^(\w+):(down|timeout|failRate|slowMs)(?:=(.+))?$/.exec(spec);
  if (svc) {
    const [, s, knob, value] = svc;
    if (!(SIM_SERVICES as readonly string[]).includes(s!))
      throw new InvalidArgumentError(`unknown service "${s}" (${SIM_SERVICES.join(', ')})`);
    const cur = { ...out.services![s as SimService] };
    if (knob === 'down' || knob === 'timeout') cur[knob] = value === undefined ? true : value === 'true';
    else if (knob === 'failRate') cur.failRate = fraction(value ?? '');
    else cur.slowMs = int('slowMs', 0)(value ?? '');
    out.services![s as SimService] = cur;
    return out;
  }
  const node = /^(\w+)=(.+)$/.exec(spec);
  if (!node || !(NODE_FAULTS as readonly string[]).includes(node[1]!)) {
    throw new InvalidArgumentError(
      `"${spec}": want <nodeFault>=<rate|xname,...> (${NODE_FAULTS.join(', ')}), <service>:<down|timeout|failRate=F|slowMs=N> or bmc:<slowMs|busyStatus|retryAfter|busyRate>=V`,
    );
  }
  const [, f, value] = node;
  if (/^[\d.]+$/.test(value!)) out.rates![f as NodeFault] = fraction(value!);
  else
    out.nodes![f as NodeFault] = [
      ...(out.nodes![f as NodeFault] ?? []),
      ...value!
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ];
  return out;
}

interface SimOpts {
  nodes?: number;
  seed?: number;
  port: number;
  host: string;
  bootorchUrl?: string;
  reportToken?: string;
  reportTokenFile?: string;
  reportTokensDir?: string;
  reportConnections?: number;
  armFraction?: number;
  river?: boolean;
  timing: string;
  initial: string;
  fault?: SimFaultsChange;
  standalone?: boolean;
  bootUrl?: string;
  bmcAddresses: string;
  bmcPort: number;
  nodesFile?: string;
  pxeConnections?: number;
}

export function registerSimCommands(program: Command, config: () => Config, untilSignal: (s: Stoppable) => void): void {
  program
    .command('sim')
    .description('the simulated cluster over HTTP (HSM, PCS, BSS, CFS v3, S3), its nodes reporting to bootorch')
    .option('--nodes <n>', 'compute nodes (default SIM_NODES, 256)', int('--nodes', 1))
    .option('--seed <n>', 'layout and fault seed (default SIM_SEED, 1)', int('--seed', 0))
    .option('--port <port>', 'listen port, 0 = any free one', int('--port', 0), 8400)
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option(
      '--bootorch-url <url>',
      'bootorch API the nodes report to, or several comma-separated (nodes spread over them by xname; default env BOOTORCH_URL; unset: nodes do not report)',
    )
    .option('--report-token <token>', 'one credential for every node (development: an operator token)')
    .option('--report-token-file <file>', 'a file with one token, or a JSON object xname -> token (re-read when it changes)')
    .option('--report-tokens-dir <dir>', 'one file per node named by its xname (what `bootorch token nodes --out` writes)')
    .option(
      '--report-connections <n>',
      "the reporters' keep-alive sockets per bootorch URL, shared by all nodes (default 128; a real node has its own)",
      int('--report-connections', 1),
    )
    .option('--arm-fraction <f>', 'fraction of compute blades that are ARM (default 0)', fraction)
    .option('--river', 'add River cabinet x3000: 3 masters, 3 workers, 3 storage nodes and 2 UANs')
    .option(
      '--timing <preset>',
      'interactive (seconds: power-on 2 s, boot 5 s), fast (tenths of a second) or instant (benchmarks)',
      'interactive',
    )
    .option('--initial <state>', 'booted (image and configuration applied), on or off', 'booted')
    .option(
      '--fault <spec>',
      'repeatable: neverPowersOn=0.02, ignoresSoftOff=<xname,...>, pcs:down, cfs:failRate=0.2, hsm:slowMs=500 (change later with POST /sim/faults)',
      parseFault,
    )
    .option('--standalone', 'a site without CSM: a Redfish BMC per node, nodes network-booting from bootorch /boot/v1')
    .option('--boot-url <url>', "--standalone: bootorch's base URL for /boot/v1 (default env BOOTORCH_BOOT_URL)")
    .option(
      '--bmc-addresses <how>',
      '--standalone: loopback (one listener, a 127.64.x.y address per BMC; Linux) or ports (a listener per BMC)',
      'loopback',
    )
    .option('--bmc-port <port>', "--standalone, loopback: the BMCs' port, 0 = any free one", int('--bmc-port', 0), 0)
    .option('--nodes-file <file>', '--standalone: write the nodes for `bootorch node apply -f` here (JSON)')
    .option(
      '--pxe-connections <n>',
      '--standalone: boot-network requests in flight at once over all nodes (default 1024)',
      int('--pxe-connections', 1),
    )
    .action(async (o: SimOpts) => {
      if (!TIMINGS[o.timing]) throw new Error(`--timing must be one of ${Object.keys(TIMINGS).join(', ')}`);
      if (!INITIAL[o.initial]) throw new Error(`--initial must be one of ${Object.keys(INITIAL).join(', ')}`);
      const c = config();
      startProcessMetrics('sim');
      const bootorchUrl = o.bootorchUrl ?? (process.env.BOOTORCH_URL || undefined);
      const reportToken = reportTokenSource({ token: o.reportToken, file: o.reportTokenFile, dir: o.reportTokensDir });
      const nodes = o.nodes ?? c.SIM_NODES;
      const bootUrl = o.bootUrl ?? (process.env.BOOTORCH_BOOT_URL || undefined);
      if (o.standalone) {
        if (!bootUrl) throw new InvalidArgumentError('--standalone needs --boot-url (or BOOTORCH_BOOT_URL): where the nodes find /boot/v1');
        if (!URL.canParse(bootUrl)) throw new InvalidArgumentError(`--boot-url: not a URL: ${bootUrl}`);
        if (o.bmcAddresses !== 'loopback' && o.bmcAddresses !== 'ports')
          throw new InvalidArgumentError('--bmc-addresses must be loopback or ports');
        if (nodes > MAX_STANDALONE_NODES) throw new InvalidArgumentError(`--nodes: at most ${MAX_STANDALONE_NODES} with --standalone`);
      }
      const sim = await startSimRole({
        nodes,
        seed: o.seed ?? c.SIM_SEED,
        port: o.port,
        host: o.host,
        bootorchUrl,
        reportToken,
        reportConnections: o.reportConnections,
        world: { ...TIMINGS[o.timing], river: !!o.river, armFraction: o.armFraction, initial: INITIAL[o.initial] },
        standalone:
          o.standalone && bootUrl
            ? {
                bootUrl,
                bmcAddresses: o.bmcAddresses as 'loopback' | 'ports',
                bmcPort: o.bmcPort,
                pxeConnections: o.pxeConnections,
              }
            : undefined,
      });
      const sa = sim.standalone;
      if (sa && o.nodesFile) writeFileSync(o.nodesFile, `${JSON.stringify({ nodes: sa.nodes })}\n`);
      if (o.fault) applyFaults(sim.world, o.fault);
      const u = sim.server.urls;
      const credential = sa
        ? 'the credential each node trades its boot ticket for'
        : !bootorchUrl
          ? ''
          : o.reportTokensDir
            ? `tokens in ${o.reportTokensDir}/<xname>`
            : o.reportTokenFile
              ? `tokens from ${o.reportTokenFile}`
              : o.reportToken
                ? 'one shared token'
                : 'no credential (reports will be refused)';
      process.stdout.write(
        [
          `bootorch sim: ${sim.world.nodes.size} nodes (seed ${sim.world.seed}, ${o.timing} timing, ${o.initial}) on ${sim.server.url}`,
          `export HSM_URL=${u.hsm}`,
          `export PCS_URL=${u.pcs}`,
          `export BSS_URL=${u.bss}`,
          `export CFS_URL=${u.cfs}`,
          `export S3_URL=${u.s3}`,
          `export SIM_IMAGE=${sim.world.defaultImage.manifest}`,
          ...(sa
            ? [
                `standalone: ${sa.nodes.length} Redfish BMCs, ${sa.bmcs}; nodes network-boot from ${bootUrl}/boot/v1 (MACs 02:b0:07:...)`,
                o.nodesFile
                  ? `register them: ${BMC_PASSWORD_ENV}=<any> bootorch node apply -f ${o.nodesFile}`
                  : 'register them: add --nodes-file FILE, then bootorch node apply -f FILE',
                `nodes report to ${bootorchUrl ?? `${bootUrl}/graphql`} with ${credential}`,
              ]
            : [
                bootorchUrl
                  ? `nodes report to ${bootorchUrl
                      .split(',')
                      .map((u) => graphqlUrl(u.trim()))
                      .join(', ')} with ${credential}`
                  : 'nodes do not report (no --bootorch-url / BOOTORCH_URL)',
              ]),
          `simulator: GET ${sim.server.url}/sim/info, /sim/counters, GET|POST /sim/faults`,
          '',
        ].join('\n'),
      );
      untilSignal({ stop: () => sim.close() });
    });

  program
    .command('reporter')
    .description('the node reporter agent: tells bootorch what this node booted (run on the node)')
    .option(
      '--cmdline <file>',
      'kernel command line to read xname=, bss_referral_token=, bos_update_frequency= from (env CMDLINE_FILE, default /proc/cmdline)',
    )
    .option('--once', 'exit after the first accepted report (retrying until then)')
    .addHelpText(
      'after',
      [
        '',
        'Environment: BOOTORCH_URL (or --url), BOOTORCH_TOKEN (or --token) or BOOTORCH_TOKEN_FILE (re-read before every',
        'report: the node credential from `bootorch token node <xname> --out FILE`), NODE_IDENTITY (overrides xname=).',
      ].join('\n'),
    )
    .action(async (o: { cmdline?: string; once?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { url?: string; token?: string };
      const env = { ...process.env };
      if (g.url) env.BOOTORCH_URL = g.url;
      if (g.token) env.BOOTORCH_TOKEN = g.token;
      const cfg = agentConfigFromEnv(env, o.cmdline ?? env.CMDLINE_FILE ?? '/proc/cmdline');
      if (!cfg.authToken && !cfg.authTokenFile)
        process.stderr.write('bootorch reporter: no BOOTORCH_TOKEN or BOOTORCH_TOKEN_FILE: bootorch will refuse the reports\n');
      const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`);
      log(`reporting ${cfg.xname} (referral token ${cfg.bssToken}) to ${graphqlUrl(cfg.url)} every ${0.75 * cfg.updateFrequencySeconds} s`);
      const agent = startReporterAgent(cfg, {
        log,
        onReport: (n) => {
          log(`report ${n} accepted`);
          if (o.once) agent.stop();
        },
      });
      for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => agent.stop());
      await agent.done;
    });
}
