/**
 * Disk deploys against the simulator (issue 21): the engine walks each node through its deploy
 * phases while the simulated deploy agents heartbeat, download the image over real HTTP and check
 * its sha256; the switch to disk goes through the power port, and the installed system's report ends
 * the deploy. Each node follows the boot credential protocol: the agent exchanges its boot ticket,
 * sends WRITTEN with the sha256 of what it wrote, and the installed system reports ACTIVE with the
 * credential it exchanged the ticket on its config drive for. Each failure reason (checksum_mismatch, image_unreachable, no_matching_disk,
 * write_error, heartbeat_timeout) fails its node with that reason and leaves it powered off.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';

const IMAGE = randomBytes(256 * 1024);
const SUM = `sha256:${createHash('sha256').update(IMAGE).digest('hex')}`;
let server: Server;
let base: string;
let c: Cluster;

const deploy = (over: Partial<DeployRecord['image']> = {}, hints?: DeployRecord['root_device_hints']): DeployRecord => ({
  image: { url: `${base}/disk.img`, format: 'raw', checksum: SUM, ...over },
  ...(hints ? { root_device_hints: hints } : {}),
});

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/disk.img') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(IMAGE);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  // Steps of the simulated agents 300 ms apart, so that status sees (and the timeline shows) every phase;
  // 4 s of silence is a dead agent (building a config drive takes a second on a busy machine).
  c = await startCluster({ options: { deploy_heartbeat_timeout: 4 }, world: { nodes: 8, bootDelayMs: 300 } });
});

afterAll(async () => {
  await c?.close();
  await new Promise((r) => server.close(r));
});

/** Waits for the session; on a timeout, shows where its nodes are. */
async function finished(name: string, timeoutMs = 30_000) {
  try {
    return await c.waitForSession(name, timeoutMs);
  } catch (e) {
    const events = (await c.events({ session: name })).map(
      (x) =>
        `${x.component_id} ${x.kind} ${x.from_phase ?? ''}->${x.to_phase ?? ''} ${x.action ?? ''} ${x.reason ?? ''} ${x.error ?? ''} ${JSON.stringify(x.data)}`,
    );
    const rows = (
      await c.db.pool.query('select id, phase, status, enabled, error, failure_reason from components where session = $1', [name])
    ).rows;
    const deploys = (await c.db.pool.query('select id, state, reason, message from component_deploys where session = $1', [name])).rows;
    throw new Error(`${(e as Error).message}\n${JSON.stringify(rows)}\n${JSON.stringify(deploys)}\n${events.join('\n')}`);
  }
}

async function deploysOf(ids: string[]) {
  return (await c.db.pool.query('select * from component_deploys where id = any($1) order by id', [ids])).rows;
}

// Every deploy's config drive (the installed system's ticket) is built with dosfstools and mtools.
describe('disk deploys on the simulator', () => {
  it('deploys an image to two nodes, switches them to disk, and finishes on the installed system’s report', async () => {
    const ids = c.world.ids().slice(0, 2);
    // Hints by size and serial (the serial is the node's own), and by name.
    await c.template('deploy-ok', { nodes: [ids[0]!], deploy: deploy({}, { size: 480, serial: `SIM-${ids[0]}` }) });
    await c.template('deploy-ok-2', { nodes: [ids[1]], deploy: deploy({}, { name: 'sda' }) });
    await c.session('s-ok', { template: 'deploy-ok', operation: 'boot' });
    await c.session('s-ok-2', { template: 'deploy-ok-2', operation: 'boot' });
    await finished('s-ok');
    await finished('s-ok-2');
    const rows = await c.components(ids);
    for (const r of rows) {
      expect(r.status, `${r.id} ${r.error} ${r.failure_reason}`).toBe('stable');
      expect(r.enabled).toBe(false);
      expect(r.error).toBe('');
      expect(c.world.node(r.id)!.diskImage).toBe(SUM);
      expect(c.world.node(r.id)!.power).toBe('on');
    }
    const deploys = await deploysOf(ids);
    expect(deploys.map((d) => d.state)).toEqual(['active', 'active']);
    for (const d of deploys)
      expect(Object.keys(d.reached)).toEqual(
        expect.arrayContaining(['pending', 'starting', 'downloading', 'verifying', 'writing', 'written', 'booting_disk', 'active']),
      );
    // The timeline shows the deploy phases in order.
    const phases = (await c.events({ component: ids[0] })).filter((e) => e.kind === 'transition').map((e) => e.to_phase);
    const order = ['powering_on', 'deploying', 'writing', 'switching_to_disk', 'booting_disk'];
    const seen = order.map((p) => phases.indexOf(p));
    expect(seen.every((i) => i >= 0)).toBe(true);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    // The switch to disk is recorded as an action, and the heartbeats as reports.
    const events = await c.events({ component: ids[0] });
    expect(events.some((e) => e.kind === 'action' && e.action === 'switching_to_disk')).toBe(true);
    // Every deploy's config drive is written (it carries the installed system's ticket).
    expect(events.filter((e) => e.kind === 'report' && e.data?.deploy).map((e) => e.data.deploy)).toEqual([
      'starting',
      'downloading',
      'verifying',
      'writing',
      'writing',
      'written',
      'active',
    ]);
    // The agent's credential ended at WRITTEN and the installed system's with its report: none left live.
    const live = await c.db.pool.query(
      `select scope from api_tokens where subject = any($1) and revoked_at is null and expires_at > now()`,
      [ids],
    );
    expect(live.rows).toEqual([]);
  });

  it('fails each node with its deploy failure reason and leaves it powered off', async () => {
    const ids = c.world.ids().slice(2, 7);
    const [checksum, unreachable, noDisk, writeFails, hangs] = ids as [string, string, string, string, string];
    c.world.faults.setNodes('diskWriteFails', [writeFails]);
    c.world.faults.setNodes('deployAgentHangs', [hangs]);
    const bootSet = (node: string, d: DeployRecord) => ({
      path: c.world.defaultImage.manifest,
      type: 's3',
      arch: 'X86',
      node_list: [node],
      deploy: d,
    });
    await c.db.pool.query(`insert into session_templates (name, enable_cfs, boot_sets) values ('deploy-bad', false, $1)`, [
      JSON.stringify({
        checksum: bootSet(checksum, deploy({ checksum: `sha256:${'0'.repeat(64)}` })),
        unreachable: bootSet(unreachable, deploy({ url: `${base}/missing.img` })),
        nodisk: bootSet(noDisk, deploy({}, { name: 'nvme0n1' })),
        writefails: bootSet(writeFails, deploy()),
        hangs: bootSet(hangs, deploy()),
      }),
    ]);
    await c.session('s-bad', { template: 'deploy-bad', operation: 'boot' });
    await finished('s-bad', 60_000);
    const want: Record<string, string> = {
      [checksum]: 'checksum_mismatch',
      [unreachable]: 'image_unreachable',
      [noDisk]: 'no_matching_disk',
      [writeFails]: 'write_error',
      [hangs]: 'heartbeat_timeout',
    };
    for (const r of await c.components(ids)) {
      expect({ id: r.id, status: r.status, reason: r.failure_reason }).toEqual({ id: r.id, status: 'failed', reason: want[r.id] });
      expect(r.error, r.id).toMatch(/^Disk deploy/);
      expect(c.world.node(r.id)!.power, r.id).toBe('off');
      expect(c.world.node(r.id)!.diskImage, r.id).toBeUndefined();
    }
    const failedEvents = (await c.events({ session: 's-bad' })).filter((e) => e.kind === 'failed');
    expect(Object.fromEntries(failedEvents.map((e) => [e.component_id, e.reason]))).toEqual(want);
    c.world.faults.clear();
  });

  it('writes the config drive bootorch builds (NoCloud, labelled cidata, with the user-data) after the image', async () => {
    const id = c.world.ids()[7]!;
    const userData = '#cloud-config\nhostname: from-the-config-drive\n';
    await c.template('deploy-cd', {
      nodes: [id],
      deploy: { ...deploy(), config_drive: { user_data: userData, meta_data: 'instance-id: i-1\n' } },
    });
    await c.session('s-cd', { template: 'deploy-cd', operation: 'boot' });
    await finished('s-cd');
    const [r] = await c.components([id]);
    expect({ status: r!.status, error: r!.error }).toEqual({ status: 'stable', error: '' });
    const node = c.world.node(id)!;
    expect(node.diskImage).toBe(SUM);
    // A FAT boot sector's volume label (offset 43, 11 bytes), and the files' bytes as they were given.
    const drive = node.configDrive!;
    expect(drive.subarray(43, 54).toString('latin1').trim()).toBe('cidata');
    expect(drive.includes(Buffer.from(userData))).toBe(true);
    expect(drive.includes(Buffer.from('instance-id: i-1\n'))).toBe(true);
    const [d] = await deploysOf([id]);
    expect(d.state).toBe('active');
    const writes = (await c.events({ component: id })).filter((e) => e.kind === 'report' && e.data?.deploy === 'writing');
    expect(writes.map((e) => e.data.message)).toEqual(['/dev/sda', 'config drive: partition 2 of /dev/sda']);
  });
});
