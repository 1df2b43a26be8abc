/**
 * The simulated BMCs' hardware inventory, as Redfish (DSP8010 schemas) gives it: each node's
 * ComputerSystem carries Manufacturer, Model, SerialNumber, UUID, BiosVersion, ProcessorSummary and
 * MemorySummary, and links to its EthernetInterfaces (two NICs; the first, the one it network-boots
 * from, has the node's simulated MAC), its Storage (one controller, two drives) and its Manager
 * (`/redfish/v1/Managers/{xname}`, FirmwareVersion). Values are deterministic per node (by its nid), with
 * a spread to filter on: every 8th compute node has 1,024 GiB, every 5th an older BIOS.
 *
 * Knobs for discovery's unhappy paths (`setSimHardware`): another MAC, memory or BIOS (a node whose
 * NIC or DIMMs were changed), or `garbage` (the ComputerSystem answers HTML, as a BMC's broken web
 * server may); `setSimBmcLogin` makes every BMC accept only that user and password (401 otherwise).
 */
import { simMac } from '../macs.ts';
import type { SimWorld } from '../world.ts';
import { json, type Reply, type Route } from './router.ts';

export interface SimHardwarePatch {
  macs?: string[];
  memoryGiB?: number;
  biosVersion?: string;
  garbage?: boolean;
}

const patches = new WeakMap<SimWorld, Map<string, SimHardwarePatch>>();
const logins = new WeakMap<SimWorld, { username: string; password: string }>();
const indexes = new WeakMap<SimWorld, Map<string, number>>();

export function setSimHardware(world: SimWorld, id: string, patch: SimHardwarePatch): void {
  if (!patches.has(world)) patches.set(world, new Map());
  patches.get(world)!.set(id, { ...patches.get(world)!.get(id), ...patch });
}

export function setSimBmcLogin(world: SimWorld, login: { username: string; password: string } | undefined): void {
  if (login) logins.set(world, login);
  else logins.delete(world);
}

/** Whether the credentials are accepted: any non-empty password, or exactly the login set. */
export function simLoginAccepted(world: SimWorld, username: string, password: string): boolean {
  const l = logins.get(world);
  return l ? l.username === username && l.password === password : password !== '';
}

/** Paths a node's own BMC answers (farm and host listeners): the service root, Systems, its system, its Manager. */
export function ownBmcPath(id: string, path: string): boolean {
  const own = `/redfish/v1/Systems/${id}`;
  return (
    path === '/redfish/v1' ||
    path === '/redfish/v1/Systems' ||
    path === own ||
    path.startsWith(`${own}/`) ||
    path === `/redfish/v1/Managers/${id}`
  );
}

/** The node's position in the world (its MAC is simMac(position), as `standaloneNodes` registers it). */
function position(world: SimWorld, id: string): number {
  let m = indexes.get(world);
  if (!m?.has(id)) indexes.set(world, (m = new Map(world.ids().map((x, i) => [x, i]))));
  return m.get(id) ?? -1;
}

export interface SimHardware {
  macs: string[];
  memoryGiB: number;
  biosVersion: string;
  garbage: boolean;
}

export function simHardware(world: SimWorld, id: string): SimHardware {
  const n = world.node(id)!;
  const i = position(world, id);
  const compute = n.role === 'Compute';
  const base: SimHardware = {
    macs: [simMac(i), `02:b1:07:${simMac(i).slice(9)}`],
    memoryGiB: compute ? (n.nid % 8 === 0 ? 1024 : 512) : 256,
    biosVersion: n.nid % 5 === 0 ? '1.2.0' : '1.4.2',
    garbage: false,
  };
  return { ...base, ...patches.get(world)?.get(id) };
}

const SYSTEMS = '/redfish/v1/Systems';

/** What the ComputerSystem adds to its power and boot fields. */
export function systemInventory(world: SimWorld, id: string): Record<string, unknown> {
  const n = world.node(id)!;
  const hw = simHardware(world, id);
  const arm = n.arch === 'ARM';
  return {
    Manufacturer: 'bootorch simulator',
    Model: arm ? 'SIM-ARM-2S' : 'SIM-X86-2S',
    SerialNumber: `SIM${String(n.nid).padStart(8, '0')}`,
    UUID: `00000000-0000-4000-8000-${n.nid.toString(16).padStart(12, '0')}`,
    BiosVersion: hw.biosVersion,
    ProcessorSummary: { Count: 2, Model: arm ? 'Simulated Neoverse V2 72-core' : 'Simulated EPYC 64-core', Status: { State: 'Enabled' } },
    MemorySummary: { TotalSystemMemoryGiB: hw.memoryGiB, Status: { State: 'Enabled' } },
    EthernetInterfaces: { '@odata.id': `${SYSTEMS}/${id}/EthernetInterfaces` },
    Storage: { '@odata.id': `${SYSTEMS}/${id}/Storage` },
    Links: { ManagedBy: [{ '@odata.id': `/redfish/v1/Managers/${id}` }] },
  };
}

/** The ComputerSystem as a BMC with a broken web server answers it, when the node's knob says so. */
export function garbageSystem(world: SimWorld, id: string): Reply | undefined {
  return simHardware(world, id).garbage
    ? { status: 200, text: '<html><body>Internal Server Error</body></html>', contentType: 'application/json' }
    : undefined;
}

const missing = (path: string): Reply =>
  json(404, { error: { code: 'Base.1.8.ResourceMissingAtURI', message: `The resource at the URI ${path} was not found.` } });

const members = (at: string, ids: string[]) =>
  json(200, { '@odata.id': at, 'Members@odata.count': ids.length, Members: ids.map((x) => ({ '@odata.id': `${at}/${x}` })) });

const DRIVES = [
  { Id: '0', Name: 'NVMe 0', Model: 'SIM NVMe 1.92TB', CapacityBytes: 1_920_383_410_176 },
  { Id: '1', Name: 'NVMe 1', Model: 'SIM NVMe 1.92TB', CapacityBytes: 1_920_383_410_176 },
];

/** The inventory routes; `authed` is the Redfish routes' credential check. */
export function redfishInventoryRoutes(authed: (h: (ctx: Parameters<Route['handler']>[0]) => Reply) => Route['handler']): Route[] {
  const known = (world: SimWorld, id: string, path: string, fn: () => Reply) => (world.node(id) ? fn() : missing(path));
  return [
    {
      method: 'GET',
      path: `${SYSTEMS}/{id}/EthernetInterfaces`,
      service: 'pcs',
      handler: authed(({ world, params, path }) =>
        known(world, params.id!, path, () =>
          members(
            path,
            simHardware(world, params.id!).macs.map((_, i) => `nic${i}`),
          ),
        ),
      ),
    },
    {
      method: 'GET',
      path: `${SYSTEMS}/{id}/EthernetInterfaces/{nic}`,
      service: 'pcs',
      handler: authed(({ world, params, path }) =>
        known(world, params.id!, path, () => {
          const i = /^nic(\d+)$/.exec(params.nic!)?.[1];
          const mac = i === undefined ? undefined : simHardware(world, params.id!).macs[Number(i)];
          if (!mac) return missing(path);
          return json(200, {
            '@odata.id': path,
            '@odata.type': '#EthernetInterface.v1_12_0.EthernetInterface',
            Id: params.nic,
            MACAddress: mac.toUpperCase(),
            PermanentMACAddress: mac.toUpperCase(),
            SpeedMbps: 100_000,
            Status: { State: 'Enabled', Health: 'OK' },
          });
        }),
      ),
    },
    {
      method: 'GET',
      path: `${SYSTEMS}/{id}/Storage`,
      service: 'pcs',
      handler: authed(({ world, params, path }) => known(world, params.id!, path, () => members(path, ['1']))),
    },
    {
      method: 'GET',
      path: `${SYSTEMS}/{id}/Storage/{storage}`,
      service: 'pcs',
      handler: authed(({ world, params, path }) =>
        known(world, params.id!, path, () =>
          params.storage !== '1'
            ? missing(path)
            : json(200, {
                '@odata.id': path,
                '@odata.type': '#Storage.v1_15_0.Storage',
                Id: '1',
                Drives: DRIVES.map((d) => ({ '@odata.id': `${path}/Drives/${d.Id}` })),
              }),
        ),
      ),
    },
    {
      method: 'GET',
      path: `${SYSTEMS}/{id}/Storage/{storage}/Drives/{drive}`,
      service: 'pcs',
      handler: authed(({ world, params, path }) =>
        known(world, params.id!, path, () => {
          const d = params.storage === '1' ? DRIVES.find((x) => x.Id === params.drive) : undefined;
          return d ? json(200, { '@odata.id': path, '@odata.type': '#Drive.v1_17_0.Drive', ...d }) : missing(path);
        }),
      ),
    },
    {
      method: 'GET',
      path: '/redfish/v1/Managers/{id}',
      service: 'pcs',
      handler: authed(({ world, params, path }) =>
        known(world, params.id!, path, () =>
          json(200, {
            '@odata.id': path,
            '@odata.type': '#Manager.v1_19_0.Manager',
            Id: params.id,
            ManagerType: 'BMC',
            FirmwareVersion: world.node(params.id!)!.nid % 7 === 0 ? '2.9.0' : '2.10.1',
          }),
        ),
      ),
    },
  ];
}
