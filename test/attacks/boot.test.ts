/**
 * Hostile clients on the boot network, against a real `bootorch api` process in standalone mode: a MAC
 * address is not a credential. Outside a node's boot window (which only a power-on bootorch makes
 * opens: here the standalone boot-parameters adapter the worker's power-on calls, on the same
 * database) the boot script mints nothing and reads as an unknown MAC's; inside it, one one-time
 * ticket, exchanged once; a flood from one source is refused 429 while others pass; iPXE's failure
 * URL outside a window records nothing; the deploy agent's credential cannot say ACTIVE, read another
 * node's drive, pass a WRITTEN whose checksum is wrong, or outlive WRITTEN; the installed system's
 * ticket (on the config drive) is not exchangeable before bootorch switched the node to its disk.
 *
 * Source addresses come from X-Forwarded-For (BOOTORCH_TRUST_PROXY=loopback), so one test process can
 * be many sources.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { StandaloneBootParams } from '../../src/adapters/standalone/boot-params.ts';
import { setDeploys } from '../../src/db/deploys.ts';

const PER_SOURCE_BURST = 40;
const NOT_SCHEDULED =
  '#!ipxe\necho bootorch: no network boot is scheduled for this NIC; trying the local disk\nsanboot --no-describe --drive 0x80 || exit 0\n';
const SUM = `sha256:${createHash('sha256').update('the image').digest('hex')}`;
const mac = (i: number) => `52:54:00:00:00:0${i}`;
const xname = (i: number) => `x3000c0s${i}b0n0`;

let db: TestDb;
let api: RoleProcess;
let base: string;
let bss: StandaloneBootParams;

beforeAll(async () => {
  db = await freshDb();
  api = startRole('api', {
    DATABASE_URL: db.url,
    PORT: '0',
    BOOTORCH_ADAPTERS: 'standalone',
    BOOTORCH_AUTH_MODE: 'tokens',
    BOOTORCH_TRUST_PROXY: 'loopback',
    // Slow refill: what a flood from one source sees is the burst.
    BOOTORCH_BOOT_BURST_PER_SOURCE: String(PER_SOURCE_BURST),
    BOOTORCH_BOOT_RATE_PER_SOURCE: '0.01',
  });
  base = `http://127.0.0.1:${(await api.waitFor(/bootorch api: http:\/\/127\.0\.0\.1:(\d+)\//))[1]}`;
  // Seven registered nodes, each a component of session s1 (as discovery and a session make them).
  for (let i = 1; i <= 7; i++) {
    await db.pool.query(`insert into node_inventory (id, mac) values ($1, $2)`, [xname(i), mac(i)]);
    await db.pool.query(`insert into components (id, enabled, session, phase) values ($1, true, 's1', 'powering_on')`, [xname(i)]);
  }
  bss = new StandaloneBootParams(db.db);
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

let source = 0;
/** A request from a source of its own (X-Forwarded-For), unless `from` is given. */
async function call(path: string, o: { method?: string; headers?: Record<string, string>; from?: string } = {}) {
  const from = o.from ?? `10.1.${Math.floor(++source / 250)}.${(source % 250) + 1}`;
  const res = await fetch(`${base}${path}`, { method: o.method ?? 'GET', headers: { 'x-forwarded-for': from, ...o.headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, text: bytes.toString('utf8'), bytes };
}
const script = (i: number) => call(`/boot/v1/bootscript?mac=${encodeURIComponent(mac(i))}`);
const exchange = (ticket: string) => call('/boot/v1/exchange', { method: 'POST', headers: { authorization: `Bearer ${ticket}` } });
const ticketOf = (text: string) => /bootorch_ticket=(btk_[A-Za-z0-9_-]{43})/.exec(text)?.[1];
const count = async (sql: string, args: unknown[] = []) => (await db.pool.query(sql, args)).rows[0].n as number;
/** Power-on's boot parameters for node i: opens its boot window. */
const powerOn = (i: number) => bss.setBootParameters({ hosts: [xname(i)], kernel: 'vmlinuz', initrd: 'initrd', params: 'console=ttyS0' });

async function gql(token: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}
const HEARTBEAT = `mutation($id: ID!, $s: DeployHeartbeatState!, $c: String) { deployHeartbeat(id: $id, state: $s, checksum: $c) { __typename ... on ReportRefused { code message } } }`;
const beat = (token: string, i: number, s: string, c?: string) => gql(token, HEARTBEAT, { id: xname(i), s, c });
const outcome = (r: Awaited<ReturnType<typeof gql>>) =>
  r.errors?.[0]?.extensions?.code ?? r.data?.deployHeartbeat?.code ?? r.data?.deployHeartbeat?.__typename;

/** Node i deploying in session s1, powered on into its deploy ramdisk; the agent's credential. */
async function deployAgent(i: number): Promise<string> {
  await setDeploys(db.db, { name: 's1', tenantKey: '' }, [
    { id: xname(i), deploy: { image: { url: 'disk.img', format: 'raw', checksum: SUM } } },
  ]);
  await powerOn(i);
  const ticket = ticketOf((await script(i)).text)!;
  const x = await exchange(ticket);
  expect(x.status, x.text).toBe(200);
  return x.text.trim();
}

describe('the boot network, as a hostile client sees it', () => {
  test('a known MAC outside its window mints nothing, 300 times, and reads exactly as an unknown MAC', async () => {
    // Node 1 was booted once (boot parameters set) and its window has ended; node 2 is disabled inside
    // its window; node 3's deploy went to its disk.
    await new StandaloneBootParams(db.db, { now: () => new Date(Date.now() - 3_600_000) }).setBootParameters({
      hosts: [xname(1)],
      kernel: 'vmlinuz',
      initrd: 'initrd',
      params: 'console=ttyS0',
    });
    await powerOn(2);
    await db.pool.query(`update node_inventory set enabled = false where id = $1`, [xname(2)]);
    await setDeploys(db.db, { name: 's1', tenantKey: '' }, [
      { id: xname(3), deploy: { image: { url: 'disk.img', format: 'raw', checksum: SUM } } },
    ]);
    await powerOn(3);
    await db.pool.query(`update component_deploys set state = 'active' where id = $1`, [xname(3)]);

    const unknown = await call('/boot/v1/bootscript?mac=52%3A54%3A00%3A00%3A09%3A09');
    expect({ status: unknown.status, text: unknown.text }).toEqual({ status: 200, text: NOT_SCHEDULED });
    const answers = await Promise.all(Array.from({ length: 300 }, (_, n) => script(1 + (n % 3))));
    for (const a of answers)
      expect({ status: a.status, text: a.text, type: a.headers.get('content-type') }).toEqual({
        status: unknown.status,
        text: unknown.text,
        type: unknown.headers.get('content-type'),
      });
    expect(await count(`select count(*)::int as n from api_tokens`)).toBe(0);
    expect(await count(`select count(*)::int as n from boot_grants where ticket_hash is not null`)).toBe(0);
  });

  test('inside its window: one live ticket; exchanged once; a second exchange is refused and recorded', async () => {
    await powerOn(4);
    const first = ticketOf((await script(4)).text)!;
    const second = ticketOf((await script(4)).text)!; // iPXE asked again: the unexchanged ticket is replaced
    expect(first).toBeDefined();
    expect(second).not.toBe(first);
    expect(await count(`select count(*)::int as n from boot_grants where node = $1 and ticket_hash is not null`, [xname(4)])).toBe(1);
    expect((await exchange(first)).status).toBe(401);

    const x = await exchange(second);
    expect(x.status).toBe(200);
    expect(x.text).toMatch(/^bto_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    const again = await exchange(second);
    expect(again).toMatchObject({ status: 401, text: 'boot ticket not accepted\n' });
    const events = (await db.pool.query(`select kind, error, data from component_events where component_id = $1`, [xname(4)])).rows;
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'error',
        error: expect.stringContaining('presented again'),
        data: expect.objectContaining({ ticket: 'reused' }),
      }),
    ]);
    await api.waitFor(/presented again/, 10_000);
    // The window closed with the exchange: nothing more for this MAC.
    expect((await script(4)).text).toBe(NOT_SCHEDULED);
    // The credential reports for its node and does nothing else.
    const token = x.text.trim();
    expect(outcome(await beat(token, 4, 'STARTING'))).toBe('FORBIDDEN');
  });

  test('a flood from one source is refused 429 with Retry-After; another source still passes', async () => {
    const flood = await Promise.all(Array.from({ length: PER_SOURCE_BURST + 20 }, () => call('/boot/v1/ipxe', { from: '10.9.9.9' })));
    const refused = flood.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('/boot/v1/ipxe', { from: '10.9.9.9' })).status).toBe(429);
    expect((await call('/boot/v1/ipxe', { from: '10.9.9.10' })).status).toBe(200);
  });

  test("iPXE's failure URL outside a window (by MAC, or an unknown attempt) writes nothing", async () => {
    const before = await count(`select count(*)::int as n from component_events`);
    for (const path of [
      `/boot/v1/failed/${encodeURIComponent(mac(1))}/kernel`,
      `/boot/v1/failed/${mac(5)}/initrd`,
      `/boot/v1/failed/${'0'.repeat(32)}/kernel`,
    ])
      expect(await call(path)).toMatchObject({ status: 200, text: NOT_SCHEDULED });
    expect(await count(`select count(*)::int as n from component_events`)).toBe(before);
  });

  test("the agent's credential: never ACTIVE, not another node's drive, WRITTEN only with the image's checksum, dead after", async () => {
    const agent5 = await deployAgent(5);
    const agent6 = await deployAgent(6);
    expect(outcome(await beat(agent5, 5, 'STARTING'))).toBe('DeployHeartbeatAccepted');
    expect(outcome(await beat(agent6, 6, 'STARTING'))).toBe('DeployHeartbeatAccepted');
    // Not another node's heartbeats or drive, and not a report.
    expect(outcome(await beat(agent5, 6, 'DOWNLOADING'))).toBe('FORBIDDEN');
    expect((await call(`/boot/v1/config-drive/${xname(6)}`, { headers: { authorization: `Bearer ${agent5}` } })).status).toBe(403);
    const report = await gql(agent5, `mutation { reportBootState(id: "${xname(5)}", bssToken: "x") { __typename } }`);
    expect(report.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // ACTIVE is bootorch's to decide, even once the node is booting from its disk.
    await db.pool.query(`update component_deploys set state = 'booting_disk' where id = $1`, [xname(6)]);
    expect(outcome(await beat(agent6, 6, 'ACTIVE'))).toBe('FORBIDDEN');
    expect((await db.pool.query(`select state from component_deploys where id = $1`, [xname(6)])).rows[0].state).toBe('booting_disk');
    // WRITTEN without a checksum is a bad request; with one that is not the image's, refused and the deploy failed.
    expect(outcome(await beat(agent5, 5, 'WRITTEN'))).toBe('BAD_USER_INPUT');
    expect(outcome(await beat(agent5, 5, 'WRITTEN', `sha256:${'1'.repeat(64)}`))).toBe('CONFLICT');
    const d = (await db.pool.query(`select state, reason from component_deploys where id = $1`, [xname(5)])).rows[0];
    expect(d).toEqual({ state: 'failed', reason: 'checksum_mismatch' });
    // The credential ended with the step.
    expect(outcome(await beat(agent5, 5, 'FAILED'))).toBe('UNAUTHENTICATED');
    expect((await call(`/boot/v1/config-drive/${xname(5)}`, { headers: { authorization: `Bearer ${agent5}` } })).status).toBe(401);
  });

  test("the installed system's ticket (on the config drive) is not exchangeable before bootorch switched to disk", async () => {
    const agent = await deployAgent(7);
    expect(outcome(await beat(agent, 7, 'STARTING'))).toBe('DeployHeartbeatAccepted');
    const drive = await call(`/boot/v1/config-drive/${xname(7)}`, { headers: { authorization: `Bearer ${agent}` } });
    expect(drive.status).toBe(200);
    const disk = /btk_[A-Za-z0-9_-]{43}/.exec(drive.bytes.toString('latin1'))![0];
    expect((await exchange(disk)).status).toBe(409);
    expect(outcome(await beat(agent, 7, 'WRITTEN', SUM))).toBe('DeployHeartbeatAccepted');
    expect((await exchange(disk)).status).toBe(409);
    // The agent's credential is dead now; bootorch switches the node to its disk (deploy-to-disk).
    expect(outcome(await beat(agent, 7, 'WRITTEN', SUM))).toBe('UNAUTHENTICATED');
    await db.pool.query(`update component_deploys set state = 'booting_disk' where id = $1`, [xname(7)]);
    const x = await exchange(disk);
    expect(x.status).toBe(200);
    const installed = x.text.trim();
    // Its own credential says ACTIVE and nothing else.
    expect(outcome(await beat(installed, 7, 'STARTING'))).toBe('FORBIDDEN');
    expect((await call(`/boot/v1/config-drive/${xname(7)}`, { headers: { authorization: `Bearer ${installed}` } })).status).toBe(403);
    expect(outcome(await beat(installed, 7, 'ACTIVE'))).toBe('DeployHeartbeatAccepted');
    expect((await db.pool.query(`select state from component_deploys where id = $1`, [xname(7)])).rows[0].state).toBe('active');
  });
});
