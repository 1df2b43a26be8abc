/**
 * BSS routes (csm-services §3): PUT/POST bootparameters hand out a new BSS-Referral-Token per request
 * (200 / 201, empty body), GET by name or nid (404 when none is known, no token in GET), and the iPXE
 * bootscript with xname, nid and bss_referral_token appended as BSS does.
 */
import type { BssEntry } from '../types.ts';
import type { SimWorld } from '../world.ts';
import { json, multi, problem, type Reply, type Route } from './router.ts';

interface Body {
  hosts?: unknown;
  nids?: unknown;
  macs?: unknown;
  params?: unknown;
  kernel?: unknown;
  initrd?: unknown;
}

function view(host: string, e: BssEntry) {
  return {
    hosts: [host],
    params: e.params,
    kernel: e.kernel,
    initrd: e.initrd,
    'cloud-init': { 'phone-home': { pub_key_dsa: '', pub_key_rsa: '', pub_key_ecdsa: '', instance_id: '', hostname: '', fqdn: '' } },
  };
}

/** hosts, or nids mapped to hosts; a string error when neither usable. */
function targets(world: SimWorld, b: Body): string[] | string {
  if (Array.isArray(b.hosts) && b.hosts.length) return b.hosts.map(String);
  if (Array.isArray(b.nids) && b.nids.length) {
    const byNid = new Map([...world.nodes.values()].map((n) => [n.nid, n.id]));
    const hosts = b.nids.map((nid) => byNid.get(Number(nid)));
    if (hosts.some((h) => !h)) return 'unknown NID';
    return hosts as string[];
  }
  if (Array.isArray(b.macs) && b.macs.length) return 'MAC addresses are not simulated; use hosts';
  return 'hosts, macs or nids required (image-only entries are not simulated)';
}

function store(world: SimWorld, body: unknown, badJson: boolean, create: boolean): Reply {
  if (badJson || typeof body !== 'object' || body === null) return problem(400, 'Bad Request: invalid BootParams');
  const b = body as Body;
  const hosts = targets(world, b);
  if (typeof hosts === 'string') return problem(400, hosts);
  if (create && hosts.some((h) => world.bss.has(h))) return problem(400, 'Already exists');
  const refusal = world.bootParametersRefusal(hosts);
  if (refusal) return problem(400, refusal);
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const token = world.setBootParameters({ hosts, kernel: str(b.kernel), initrd: str(b.initrd), params: str(b.params) });
  return { status: create ? 201 : 200, headers: { 'BSS-Referral-Token': token } };
}

function bootscript(world: SimWorld, q: URLSearchParams): Reply {
  const name = q.get('name');
  const nid = q.get('nid');
  if (!name && !nid && !q.get('mac')) return problem(400, 'Need a mac=, name=, or nid= parameter');
  const node = name ? world.node(name) : nid ? [...world.nodes.values()].find((n) => n.nid === Number(nid)) : undefined;
  const e = node && world.bss.get(node.id);
  if (!node || !e || !e.kernel) return problem(404, 'Cannot find boot parameters for requested host');
  const extra = [`xname=${node.id}`, `nid=${node.nid}`, `bss_referral_token=${e.token}`, 'ds=nocloud-net;s=http://bss:8888/'];
  const params = [e.params, ...extra.filter((x) => !e.params.includes(x.split('=')[0]! + '='))].filter(Boolean).join(' ');
  const text = [
    '#!ipxe',
    `kernel --name kernel ${e.kernel} initrd=initrd ${params} || goto boot_retry`,
    ...(e.initrd ? [`initrd --name initrd ${e.initrd} || goto boot_retry`] : []),
    'imgstat || echo Could not show image information.',
    'boot || goto boot_retry',
    ':boot_retry',
    'sleep 30',
    `chain https://api-gw-service-nmn.local/apis/bss/boot/v1/bootscript?name=${node.id}&retry=1`,
  ].join('\n');
  return { status: 200, text, contentType: 'text/plain' };
}

export const bssRoutes: Route[] = [
  {
    method: 'PUT',
    path: '/boot/v1/bootparameters',
    service: 'bss',
    handler: ({ world, body, badJson }) => store(world, body, badJson, false),
  },
  {
    method: 'POST',
    path: '/boot/v1/bootparameters',
    service: 'bss',
    handler: ({ world, body, badJson }) => store(world, body, badJson, true),
  },
  {
    method: 'GET',
    path: '/boot/v1/bootparameters',
    service: 'bss',
    handler: ({ world, query }) => {
      const names = multi(query, 'name');
      const nids = multi(query, 'nid').map(Number);
      if (!names.length && !nids.length)
        return json(
          200,
          [...world.bss].map(([h, e]) => view(h, e)),
        );
      const byNid = new Map([...world.nodes.values()].map((n) => [n.nid, n.id]));
      const hosts = [...names, ...nids.map((n) => byNid.get(n)).filter((h): h is string => !!h)];
      const found = hosts.filter((h) => world.bss.has(h)).map((h) => view(h, world.bss.get(h)!));
      if (!found.length) return problem(404, 'Cannot find boot parameters for requested Hosts');
      return json(200, found);
    },
  },
  { method: 'GET', path: '/boot/v1/bootscript', service: 'bss', handler: ({ world, query }) => bootscript(world, query) },
];
