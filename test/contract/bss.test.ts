import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRig, type Rig } from './harness.ts';
import { contractTest } from './contracts.ts';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(() => rig.close());

const K = 's3://boot-images/1dbb777c-2527-449b-bd6d-fb4d1cb79e88/kernel';
const I = 's3://boot-images/1dbb777c-2527-449b-bd6d-fb4d1cb79e88/initrd';

describe('BSS client against the simulator, under the BSS contract', () => {
  it('PUT returns a new BSS-Referral-Token each time; GET reads entries back', async () => {
    const hosts = rig.world.ids().slice(0, 3);
    const p = { hosts, kernel: K, initrd: I, params: 'console=ttyS0,115200 bos_session_id=b7e6 ip=dhcp' };
    const t1 = await rig.adapters.bootParams.setBootParameters(p);
    const t2 = await rig.adapters.bootParams.setBootParameters(p);
    expect(t1.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(t2.token).not.toBe(t1.token);
    const put = rig.exchanges.find((x) => x.method === 'PUT')!;
    expect(put).toMatchObject({ status: 200, responseBody: '' });
    expect(JSON.parse(put.requestBody)).toEqual({ hosts, params: p.params, kernel: K, initrd: I });
    expect(rig.world.bss.get(hosts[0]!)!.token).toBe(t2.token);
    const got = await rig.adapters.bootParams.getBootParameters([...hosts, 'x9999c0s0b0n0']);
    expect(got).toEqual(hosts.map((h) => ({ hosts: [h], kernel: K, initrd: I, params: p.params })));
  });

  it('GET of hosts without entries is a 404 that the client reads as none', async () => {
    expect(await rig.adapters.bootParams.getBootParameters(['x9999c0s0b0n0'])).toEqual([]);
    expect(rig.exchanges.at(-1)!.status).toBe(404);
  });

  it('serves the boot script with xname, nid and the referral token', async () => {
    const [h] = rig.world.ids() as [string];
    const { token } = await rig.adapters.bootParams.setBootParameters({ hosts: [h], kernel: K, initrd: I, params: 'quiet' });
    const res = await rig.raw(`/boot/v1/bootscript?name=${h}`);
    const text = await res.text();
    expect(text).toMatch(/^#!ipxe\n/);
    expect(text).toContain(`kernel --name kernel ${K} initrd=initrd quiet xname=${h} nid=1 bss_referral_token=${token}`);
    expect((await rig.raw('/boot/v1/bootscript')).status).toBe(400);
    const post = await rig.raw('/boot/v1/bootparameters', { method: 'POST', body: { hosts: [h], kernel: K } });
    expect(post.status).toBe(400);
  });

  contractTest('every exchange satisfied the BSS contract', async () => {
    expect(await rig.violations()).toEqual([]);
  });
});
