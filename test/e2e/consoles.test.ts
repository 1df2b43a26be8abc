/**
 * Node consoles kept through real IPMI Serial-over-LAN: `bootorch api` and `bootorch worker` as
 * processes (standalone), a node registered with a real OpenIPMI ipmi_sim BMC whose SOL is wired to a
 * serial line this test plays (test/helpers/ipmi-sim.ts). The worker's capture activates SOL with
 * ipmitool; what the line sends is read back through GraphQL (nodeConsole, explain's consoleTail), the
 * REST extension and the CLI (`bootorch console`, with --follow), to operators, and to viewers only
 * once console_viewers is on. Boot attempts split at the node's power-on, the per-attempt bound drops
 * the oldest bytes, and a session kicked off the BMC is activated again.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/index.ts';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { freePort, SIM_BMC_PASSWORD, SIM_BMC_USER, SolBmc } from '../helpers/ipmi-sim.ts';
import { runCli, startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';
import { haveTools } from '../helpers/tools.ts';

const HAVE_ALL = haveTools('test/e2e/consoles', ['ipmitool', 'ipmi_sim', 'stdbuf']);

const NODE = 'x3000c0s1b0n0';
let db: TestDb;
let bmc: SolBmc;
let api: RoleProcess;
let worker: RoleProcess;
let base: string;
const tokens: Record<'admin' | 'operator' | 'viewer', string> = { admin: '', operator: '', viewer: '' };

async function gqlAs(role: keyof typeof tokens, query: string, variables: Record<string, unknown> = {}) {
  const send = () =>
    fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[role]}` },
      body: JSON.stringify({ query, variables }),
    });
  // A kept-alive connection the server closed as the request went out ("other side closed", seen under
  // heavy load) is the client's to retry once; an answer of any kind is not retried.
  const r = await send().catch((e: Error & { cause?: { code?: string } }) => {
    if (e.cause?.code !== 'UND_ERR_SOCKET') throw e;
    return send();
  });
  return (await r.json()) as { data?: any; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}

async function gql(role: keyof typeof tokens, query: string, variables: Record<string, unknown> = {}) {
  const body = await gqlAs(role, query, variables);
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const CONSOLE = `query($id: ID!, $lines: Int, $search: String, $attempt: DateTime) {
  nodeConsole(componentId: $id, lines: $lines, search: $search, attempt: $attempt) { attempt text cursor attempts { attempt bytes } } }`;
const consoleText = async (v: Record<string, unknown> = {}) => (await gql('operator', CONSOLE, { id: NODE, ...v })).nodeConsole;

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(cond, what, timeoutMs, () => `api:\n${api.output()}\nworker:\n${worker.output()}\nipmi_sim:\n${bmc.log()}`);
}

/**
 * ipmi_sim connects the serial line a moment before the SOL session is operational, and what the line
 * sends meanwhile reaches nobody (a BMC keeps no history): a probe line is sent until it is kept.
 */
async function sessionUp(): Promise<void> {
  let n = 0;
  await until(async () => {
    bmc.write(`probe ${++n}\r\n`);
    return /probe \d+/.test((await consoleText())?.text ?? '');
  }, 'a probe line kept');
}

/** Waits until the newest attempt's text contains `needle`. */
const seen = (needle: string) => until(async () => ((await consoleText())?.text ?? '').includes(needle), `console shows "${needle}"`);

beforeAll(async () => {
  if (!HAVE_ALL) return;
  db = await freshDb();
  await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify({ discovery_frequency: 1, polling_frequency: 2 })]);
  bmc = await SolBmc.start();
  for (const role of ['admin', 'operator', 'viewer'] as const)
    tokens[role] = (await createApiToken(db.db, { role, subject: `${role}-1` })).token;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    BOOTORCH_ADAPTERS: 'standalone',
    DATABASE_URL: db.url,
    BOOTORCH_SECRET_KEY: randomBytes(32).toString('base64'),
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: String(port),
    LOG_LEVEL: 'info',
  };
  api = startRole('api', env);
  worker = startRole('worker', env);
  // Generous: on a loaded machine (many test processes on two cores) a role can take minutes to start.
  await Promise.all([api.waitFor(/api listening/, 240_000), worker.waitFor(/worker running/, 240_000)]);
  await gql('admin', `mutation($n: [NodeInput!]!) { registerNodes(nodes: $n) { xname } }`, {
    n: [
      {
        xname: NODE,
        mac: '52:54:00:00:07:01',
        bmc: { driver: 'IPMI', address: bmc.address, username: SIM_BMC_USER, password: SIM_BMC_PASSWORD },
      },
    ],
  });
}, 300_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await bmc?.stop();
  await db?.drop();
});

describe.skipIf(!HAVE_ALL)('node consoles over IPMI SOL', { timeout: 240_000 }, () => {
  it("keeps what the node's serial port prints, through a real SOL session", async () => {
    await until(async () => bmc.connected, 'the worker activates SOL (ipmi_sim connects the serial line)');
    expect(worker.output()).toMatch(/console capture started/);
    await sessionUp();
    bmc.write('[    0.000000] Linux version 6.1.0-57-cloud-amd64\r\n');
    bmc.write('dracut-initqueue[312]: Warning: dracut-initqueue: timeout, still waiting for following initqueue hooks\r\n');
    bmc.write('[   42.100000] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\r\n');
    await seen('Kernel panic');
    const c = await consoleText();
    expect(c.text).toContain('Linux version 6.1.0');
    // No power-on by bootorch yet: the text belongs to the epoch attempt.
    expect(new Date(c.attempt).getTime()).toBe(0);
    expect((await consoleText({ lines: 1 })).text).toBe(
      '[   42.100000] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\n',
    );
    expect((await consoleText({ search: 'DRACUT' })).text).toMatch(/^dracut-initqueue\[312\].*timeout.*\n$/);
  });

  it('shows the last lines in a failed node’s explain, to those who may read consoles', async () => {
    await until(async () => (await db.pool.query('select 1 from components where id = $1', [NODE])).rowCount === 1, 'discovery');
    await db.pool.query(
      `update components set enabled = false, status_override = 'failed', failure_reason = 'boot_timeout', error = 'did not report' where id = $1`,
      [NODE],
    );
    const q = `query($id: ID!) { explain(componentId: $id) { status consoleTail } }`;
    const e = (await gql('operator', q, { id: NODE })).explain;
    expect(e.status).toBe('FAILED');
    expect(e.consoleTail.at(-1)).toMatch(/Kernel panic - not syncing/);
    expect((await gql('viewer', q, { id: NODE })).explain.consoleTail).toBeNull();
    const cli = await runCli(['explain', NODE], { BOOTORCH_URL: `${base}/graphql`, BOOTORCH_TOKEN: tokens.operator });
    expect(cli.stdout).toMatch(/console \(last lines\):\n(.*\n)*\s+\| \[ {3}42\.1\d*\] Kernel panic/);
  });

  it('refuses viewers until console_viewers is on', async () => {
    const refused = await gqlAs('viewer', CONSOLE, { id: NODE });
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.errors?.[0]?.message).toMatch(/console_viewers/);
    const rest = await fetch(`${base}/bootorch/v1/components/${NODE}/console`, { headers: { authorization: `Bearer ${tokens.viewer}` } });
    expect(rest.status).toBe(403);
    await gql('admin', 'mutation { patchOptions(patch: { consoleViewers: true }) { consoleViewers } }');
    expect((await gql('viewer', CONSOLE, { id: NODE })).nodeConsole.text).toContain('Kernel panic');
    await gql('admin', 'mutation { patchOptions(patch: { consoleViewers: false }) { consoleViewers } }');
  });

  it('answers the REST extension and the CLI', async () => {
    const r = await fetch(`${base}/bootorch/v1/components/${NODE}/console?lines=2`, {
      headers: { authorization: `Bearer ${tokens.operator}` },
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { component_id: string; attempt: string; text: string; attempts: unknown[] };
    expect(body.component_id).toBe(NODE);
    expect(body.attempt).toBe('1970-01-01T00:00:00.000Z');
    expect(body.text.split('\n').filter(Boolean)).toHaveLength(2);
    const bad = await fetch(`${base}/bootorch/v1/components/${NODE}/console?lines=x`, {
      headers: { authorization: `Bearer ${tokens.operator}` },
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/lines/);
    const missing = await fetch(`${base}/bootorch/v1/components/x9000c0s0b0n0/console`, {
      headers: { authorization: `Bearer ${tokens.operator}` },
    });
    expect(missing.status).toBe(404);

    const env = { BOOTORCH_URL: `${base}/graphql`, BOOTORCH_TOKEN: tokens.operator };
    const once = await runCli(['console', NODE, '--search', 'panic'], env);
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(/^\[ {3}42\.1\d*\] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block\(0,0\)\n$/);
    // A viewer while console_viewers is off: one line saying who may read consoles and which option lets
    // viewers, exit 1 (the token was taken; the role may not), no stack and no bare HTTP status.
    const viewer = await runCli(['console', NODE], { ...env, BOOTORCH_TOKEN: tokens.viewer });
    expect(viewer.code).toBe(1);
    expect(viewer.stdout).toBe('');
    expect(viewer.stderr).toBe(
      'bootorch: forbidden: node consoles can hold secrets: operators and admins read them, viewers only while the option console_viewers is on (an admin sets it: patchOptions consoleViewers: true) [FORBIDDEN]\n',
    );

    const follow = startRole('console', env, [NODE, '--follow', '--interval', '0.2']);
    try {
      await follow.waitFor(/Kernel panic/, 60_000);
      bmc.write('login: followed line\r\n');
      await follow.waitFor(/login: followed line/, 30_000);
    } finally {
      await follow.stop();
    }
  });

  it('splits boot attempts at power-on and keeps each within console_bytes_per_boot, oldest dropped', async () => {
    // What a power-on by bootorch writes (the boot parameters it set, with their time): a new attempt.
    await db.pool.query('update node_inventory set boot_set_at = now() where id = $1', [NODE]);
    bmc.write('second boot: SeaBIOS\r\n');
    await seen('second boot');
    const c = await consoleText();
    expect(c.text).not.toContain('Kernel panic');
    expect(c.attempts).toHaveLength(2);
    const first = (await consoleText({ attempt: c.attempts[1].attempt })).text;
    expect(first).toContain('Kernel panic');

    await gql('admin', 'mutation { patchOptions(patch: { consoleBytesPerBoot: 1024 }) { consoleBytesPerBoot } }');
    for (let i = 0; i < 40; i++) bmc.write(`filler line ${String(i).padStart(3, '0')} ${'x'.repeat(60)}\r\n`);
    await seen('filler line 039');
    const bounded = await consoleText();
    expect(Buffer.byteLength(bounded.text)).toBeLessThanOrEqual(1024);
    expect(bounded.attempts[0].bytes).toBeLessThanOrEqual(1024);
    expect(bounded.text).not.toContain('second boot');
    expect(bounded.text).not.toContain('filler line 000');
  });

  it('activates SOL again when the session is taken away at the BMC', async () => {
    await gql('admin', 'mutation { patchOptions(patch: { consoleIdleReconnect: 2 }) { consoleIdleReconnect } }');
    // Another client deactivates the payload (an operator's `sol deactivate`): the capture's ipmitool ends.
    execFileSync('ipmitool', ['-I', 'lanplus', '-C', '3', ...hostArgs(bmc.address), '-U', SIM_BMC_USER, '-E', 'sol', 'deactivate'], {
      env: { PATH: process.env.PATH, IPMI_PASSWORD: SIM_BMC_PASSWORD },
      timeout: 15_000,
    });
    // Without a new activation nothing more would arrive: ipmitool stays up, silent, on an ended session.
    let n = 0;
    await until(
      async () => {
        bmc.write(`after reconnect ${++n}: login:\r\n`);
        return /after reconnect \d+: login:/.test((await consoleText())?.text ?? '');
      },
      'lines kept again after the deactivation',
      60_000,
    );
    expect(bmc.connected).toBe(true);
  });
});

const hostArgs = (address: string) => {
  const [h, p] = address.split(':');
  return ['-H', h!, '-p', p!];
};
