/**
 * A node's hardware as its BMC describes it (discovery and re-inspection, docs/discovery.md): what
 * Redfish's ComputerSystem and its Processors, Memory, EthernetInterfaces, Storage and Manager say, or
 * what IPMI's FRU and LAN records say. Fields a BMC did not give are null or empty, never guessed.
 */
export interface NodeHardware {
  /** How it was read. */
  source: 'redfish' | 'ipmi';
  manufacturer: string;
  model: string;
  serialNumber: string;
  /** The system's UUID ('' when none). */
  uuid: string;
  cpuCount: number | null;
  cpuModel: string;
  memoryGiB: number | null;
  /** MACs of the enabled host NICs, the one it network-boots from first (lowercase, colon-separated). */
  macs: string[];
  disks: { name: string; model: string; capacityBytes: number }[];
  biosVersion: string;
  /** The BMC's own firmware (Redfish Manager.FirmwareVersion, IPMI `mc info`'s Firmware Revision). */
  bmcFirmwareVersion: string;
}

export const emptyHardware = (source: NodeHardware['source']): NodeHardware => ({
  source,
  manufacturer: '',
  model: '',
  serialNumber: '',
  uuid: '',
  cpuCount: null,
  cpuModel: '',
  memoryGiB: null,
  macs: [],
  disks: [],
  biosVersion: '',
  bmcFirmwareVersion: '',
});
