/**
 * The simulator's BMCs as Redfish (DMTF DSP0266) speaks: one ComputerSystem per node under
 * /redfish/v1/Systems/{xname} with `PowerState`, `Boot` (override target settable by PATCH) and the
 * `#ComputerSystem.Reset` action (On, ForceOff, GracefulShutdown, GracefulRestart, ForceRestart).
 * Resets go through the same world power model as PCS transitions, so the node faults apply
 * (ignoresSoftOff, neverPowersOn, powerUndefined = PowerState null), and the routes count as the
 * `pcs` service, whose fault knobs (down, failRate, slowMs, timeout) they share: PCS is the BMCs'
 * front door, the simulator has one power plane. Basic auth with a non-empty password is required
 * (401 otherwise); errors are Redfish error bodies. Each node's BMC has its own fault knobs too
 * (node faults bmcDead, bmcRefuses, bmcSlow, bmcBusy; the server applies them before the route).
 */
import type { SimWorld } from '../world.ts';
import type { PcsOperation } from '../power.ts';
import { json, type Ctx, type Reply, type Route } from './router.ts';
import { garbageSystem, redfishInventoryRoutes, simLoginAccepted, systemInventory } from './redfish-inventory.ts';

const RESETS: Record<string, PcsOperation> = {
  On: 'On',
  ForceOff: 'Force-Off',
  GracefulShutdown: 'Soft-Off',
  GracefulRestart: 'Soft-Restart',
  ForceRestart: 'Hard-Restart',
};
const TARGETS = ['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup'];
const SYSTEMS = '/redfish/v1/Systems';
/** The route templates of one node's BMC (the ones its BMC faults apply to). */
export const REDFISH_SYSTEM = `${SYSTEMS}/{id}`;

interface BootOverride {
  BootSourceOverrideTarget: string;
  BootSourceOverrideEnabled: string;
}
const overrides = new WeakMap<SimWorld, Map<string, BootOverride>>();

/** A ComputerSystem's SerialConsole (v1.13+) as the simulator answers it. */
export interface SimSerialConsole {
  MaxConcurrentSessions: number;
  SSH: {
    ServiceEnabled: boolean;
    Port?: number;
    SharedWithManagerCLI?: boolean;
    ConsoleEntryCommand?: string;
    HotKeySequenceDisplay?: string;
  };
  IPMI: { ServiceEnabled: boolean; Port?: number };
}
const serialConsoles = new WeakMap<SimWorld, Map<string, SimSerialConsole>>();
/** Offers nothing: `bootorch sim`'s one port has no console to serve. */
const NO_CONSOLE: SimSerialConsole = { MaxConcurrentSessions: 0, SSH: { ServiceEnabled: false }, IPMI: { ServiceEnabled: false } };

/** What a node's system says of its serial console (a BMC farm offers its SSH consoles here; tests set others). */
export function setSimSerialConsole(world: SimWorld, id: string, sc: SimSerialConsole): void {
  if (!serialConsoles.has(world)) serialConsoles.set(world, new Map());
  serialConsoles.get(world)!.set(id, sc);
}

/** The boot override a node's BMC holds (tests read what the adapter set). */
export function redfishBootOverride(world: SimWorld, id: string): BootOverride {
  return overrides.get(world)?.get(id) ?? { BootSourceOverrideTarget: 'None', BootSourceOverrideEnabled: 'Disabled' };
}

function error(status: number, code: string, message: string): Reply {
  return json(status, {
    error: { code: `Base.1.8.${code}`, message, '@Message.ExtendedInfo': [{ MessageId: `Base.1.8.${code}`, Message: message }] },
  });
}

/** A busy BMC's answer (bmcBusy): 429 or 503 with Retry-After (seconds; none when 0). */
export function redfishBusy(status: 429 | 503, retryAfter: number): Reply {
  const r = error(status, 'ServiceTemporarilyUnavailable', `The service is temporarily unavailable (HTTP ${status}); retry later.`);
  return retryAfter > 0 ? { ...r, headers: { 'retry-after': String(retryAfter) } } : r;
}

/** Runs the handler when the request carries Basic credentials the BMCs accept (redfish-inventory.ts's simLoginAccepted). */
function authed(handler: (ctx: Ctx) => Reply): (ctx: Ctx) => Reply {
  return (ctx) => {
    const h = String(ctx.headers.authorization ?? '');
    const m = /^Basic (.+)$/i.exec(h);
    const [username = '', password = ''] = m ? Buffer.from(m[1]!, 'base64').toString('utf8').split(/:(.*)/s) : [];
    if (!simLoginAccepted(ctx.world, username, password))
      return error(401, 'NoValidSession', 'There is no valid session established with the implementation.');
    return handler(ctx);
  };
}

function system(world: SimWorld, id: string): Reply {
  const n = world.node(id);
  if (!n) return error(404, 'ResourceMissingAtURI', `The resource at the URI ${SYSTEMS}/${id} was not found.`);
  const garbage = garbageSystem(world, id);
  if (garbage) return garbage;
  const seen = world.observedPower(n);
  return json(200, {
    ...systemInventory(world, id),
    '@odata.id': `${SYSTEMS}/${id}`,
    '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem',
    Id: id,
    Name: id,
    PowerState: seen.powerState === 'undefined' ? null : seen.powerState === 'on' ? 'On' : 'Off',
    Status: { State: seen.managementState === 'available' ? 'Enabled' : 'UnavailableOffline', Health: 'OK' },
    Boot: { ...redfishBootOverride(world, id), 'BootSourceOverrideTarget@Redfish.AllowableValues': TARGETS },
    SerialConsole: serialConsoles.get(world)?.get(id) ?? NO_CONSOLE,
    Actions: {
      '#ComputerSystem.Reset': {
        target: `${SYSTEMS}/${id}/Actions/ComputerSystem.Reset`,
        'ResetType@Redfish.AllowableValues': Object.keys(RESETS),
      },
    },
  });
}

export const redfishRoutes: Route[] = [
  {
    method: 'GET',
    path: '/redfish/v1',
    service: 'pcs',
    handler: () =>
      json(200, {
        '@odata.id': '/redfish/v1',
        '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
        RedfishVersion: '1.15.0',
        Systems: { '@odata.id': SYSTEMS },
      }),
  },
  {
    method: 'GET',
    path: SYSTEMS,
    service: 'pcs',
    // A node's own BMC lists its one system; `bootorch sim`'s single port lists them all.
    handler: authed(({ world, bmc }) => {
      const ids = bmc ? [bmc] : world.ids();
      return json(200, {
        '@odata.id': SYSTEMS,
        '@odata.type': '#ComputerSystemCollection.ComputerSystemCollection',
        'Members@odata.count': ids.length,
        Members: ids.map((id) => ({ '@odata.id': `${SYSTEMS}/${id}` })),
      });
    }),
  },
  { method: 'GET', path: `${SYSTEMS}/{id}`, service: 'pcs', handler: authed(({ world, params }) => system(world, params.id!)) },
  {
    method: 'PATCH',
    path: `${SYSTEMS}/{id}`,
    service: 'pcs',
    handler: authed(({ world, params, body, badJson }) => {
      if (!world.node(params.id!)) return system(world, params.id!);
      const boot = (body as { Boot?: Partial<BootOverride> } | undefined)?.Boot;
      if (badJson || !boot) return error(400, 'MalformedJSON', 'The request body must be JSON with a Boot object.');
      const current = redfishBootOverride(world, params.id!);
      const target = boot.BootSourceOverrideTarget ?? current.BootSourceOverrideTarget;
      if (!TARGETS.includes(target))
        return error(
          400,
          'PropertyValueNotInList',
          `The value ${target} for BootSourceOverrideTarget is not in the list of acceptable values.`,
        );
      const enabled = boot.BootSourceOverrideEnabled ?? current.BootSourceOverrideEnabled;
      if (!['Disabled', 'Once', 'Continuous'].includes(enabled))
        return error(
          400,
          'PropertyValueNotInList',
          `The value ${enabled} for BootSourceOverrideEnabled is not in the list of acceptable values.`,
        );
      if (!overrides.has(world)) overrides.set(world, new Map());
      overrides.get(world)!.set(params.id!, { BootSourceOverrideTarget: target, BootSourceOverrideEnabled: enabled });
      // The node's next boot follows the override (disk deploys switch it to Hdd).
      world.setBootFromDisk(params.id!, enabled !== 'Disabled' && target === 'Hdd');
      return { status: 204 };
    }),
  },
  {
    method: 'POST',
    path: `${SYSTEMS}/{id}/Actions/ComputerSystem.Reset`,
    service: 'pcs',
    handler: authed(({ world, params, body, badJson }) => {
      if (!world.node(params.id!)) return system(world, params.id!);
      const type = (body as { ResetType?: unknown } | undefined)?.ResetType;
      const op = typeof type === 'string' ? RESETS[type] : undefined;
      if (badJson || !op)
        return error(
          400,
          'ActionParameterNotSupported',
          `The ResetType ${String(type)} is not supported (${Object.keys(RESETS).join(', ')}).`,
        );
      world.transition(op, [params.id!]);
      return { status: 204 };
    }),
  },
  ...redfishInventoryRoutes(authed),
];
