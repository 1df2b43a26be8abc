/**
 * A BMC's inventory over IPMI with ipmitool: `fru print 0` (the product's and board's manufacturer,
 * name and serial, and the MACs its custom "Extra" fields hold) and `mc info` (the BMC's firmware
 * revision). IPMI has no record of the host's NICs: a FRU whose Product or Board Extra field holds a
 * MAC (`mac=52:54:00:00:00:01`, or the MAC alone), as some vendors write the onboard NIC's there, gives
 * the MAC the node boots from; without one the system is refused by the plan (no MAC). Calls go through
 * the BmcGuard as power's do.
 */
import { emptyHardware, type NodeHardware } from '../../domain/hardware.ts';
import { normaliseMac } from '../../domain/node-registration.ts';
import type { BmcTarget } from './bmc.ts';
import type { BmcGuard } from './bmc-guard.ts';
import type { IpmiTool } from './ipmi.ts';

/** `Key : value` lines of ipmitool's output (the first of each key). */
function fields(out: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const line of out.split('\n')) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const k = line.slice(0, i).trim();
    const v = line.slice(i + 1).trim();
    if (k) m.set(k, [...(m.get(k) ?? []), v]);
  }
  return m;
}

export function parseIpmiInventory(fru: string, mc: string): NodeHardware {
  const f = fields(fru);
  const one = (...keys: string[]) => keys.map((k) => f.get(k)?.[0] ?? '').find(Boolean) ?? '';
  const hw = emptyHardware('ipmi');
  hw.manufacturer = one('Product Manufacturer', 'Board Mfg');
  hw.model = one('Product Name', 'Board Product');
  hw.serialNumber = one('Product Serial', 'Board Serial');
  for (const k of ['Product Extra', 'Board Extra', 'Chassis Extra'])
    for (const v of f.get(k) ?? []) {
      const mac = normaliseMac(v.replace(/^mac\s*[=:]\s*/i, ''));
      if (mac && !hw.macs.includes(mac)) hw.macs.push(mac);
    }
  hw.bmcFirmwareVersion = fields(mc).get('Firmware Revision')?.[0] ?? '';
  return hw;
}

export class IpmiInventory {
  constructor(
    private readonly tool: IpmiTool,
    private readonly guard: BmcGuard,
  ) {}

  /** The hardware of the system behind the BMC at `t.address` (host[:port]). */
  async read(t: BmcTarget): Promise<NodeHardware> {
    const fru = await this.guard.run(t, () => this.tool.query(t, ['fru', 'print', '0']));
    const mc = await this.guard.run(t, () => this.tool.query(t, ['mc', 'info']));
    return parseIpmiInventory(fru, mc);
  }
}
