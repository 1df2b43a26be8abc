/**
 * Where a Redfish system's console is (redfish-inventory.ts serialConsoleOf): SSH before IPMI, the
 * DMTF default ports, the console entry command, the BMC's host from the system URL (IPv6 too), and
 * nothing offered when SerialConsole is absent, null or has both services off.
 */
import { describe, expect, it } from 'vitest';
import { serialConsoleOf } from '../../src/adapters/standalone/redfish-inventory.ts';

const URL_ = 'https://bmc1.example:8443/redfish/v1/Systems/1';
const cases: Array<[string, unknown, string, unknown]> = [
  [
    'SSH with a port and an entry command',
    { SerialConsole: { SSH: { ServiceEnabled: true, Port: 2200, ConsoleEntryCommand: 'console com2' }, IPMI: { ServiceEnabled: true } } },
    URL_,
    { way: 'ssh', host: 'bmc1.example', port: 2200, entryCommand: 'console com2' },
  ],
  [
    'SSH on its default port',
    { SerialConsole: { SSH: { ServiceEnabled: true } } },
    URL_,
    { way: 'ssh', host: 'bmc1.example', port: 22, entryCommand: '' },
  ],
  [
    'IPMI only, its default port',
    { SerialConsole: { SSH: { ServiceEnabled: false, Port: 22 }, IPMI: { ServiceEnabled: true, Port: 623 } } },
    URL_,
    { way: 'sol', address: 'bmc1.example' },
  ],
  [
    'IPMI on another port',
    { SerialConsole: { IPMI: { ServiceEnabled: true, Port: 6230 } } },
    URL_,
    { way: 'sol', address: 'bmc1.example:6230' },
  ],
  [
    'IPMI at an IPv6 BMC',
    { SerialConsole: { IPMI: { ServiceEnabled: true, Port: 6230 } } },
    'https://[fd00::5]/redfish/v1/Systems/1',
    { way: 'sol', address: '[fd00::5]:6230' },
  ],
  [
    'SSH at an IPv6 BMC',
    { SerialConsole: { SSH: { ServiceEnabled: true } } },
    'https://[fd00::5]/redfish/v1/Systems/1',
    { way: 'ssh', host: 'fd00::5', port: 22, entryCommand: '' },
  ],
  ['both off', { SerialConsole: { SSH: { ServiceEnabled: false }, IPMI: { ServiceEnabled: false } } }, URL_, { way: 'none' }],
  ['ServiceEnabled null', { SerialConsole: { SSH: { ServiceEnabled: null } } }, URL_, { way: 'none' }],
  ['no SerialConsole (before ComputerSystem v1.13)', { Id: '1' }, URL_, { way: 'none' }],
  ['SerialConsole null', { SerialConsole: null }, URL_, { way: 'none' }],
];

describe('serialConsoleOf', () => {
  it.each(cases)('%s', (_, body, address, want) => {
    expect(serialConsoleOf(body, address)).toEqual(want);
  });

  it('refuses a port out of range', () => {
    expect(() => serialConsoleOf({ SerialConsole: { SSH: { ServiceEnabled: true, Port: 70000 } } }, URL_)).toThrow();
  });
});
