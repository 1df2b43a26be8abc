/**
 * bootorch's own limits are not a BMC's failure: a worker out of open files (EMFILE) fails its BMC
 * calls as `local_resources`, naming the limit, and lives on. Redfish under a low limit:
 * test/contract/redfish-connections.test.ts. Here ipmitool, in both modes: the spawn fails before any
 * ipmitool runs (no binary or BMC is needed), and its 'error' arrives on the next tick with no stdio.
 */
import { describe, expect, it } from 'vitest';
import { underFileLimit } from '../helpers/file-limit.ts';

async function probe(mode: 'process' | 'shell') {
  const { code, out, err } = await underFileLimit(64, 'test/fixtures/ipmi-fd-probe.ts', { args: [mode] });
  return { code, err, result: out ? (JSON.parse(out) as { kind: string; message: string }) : undefined };
}

describe('ipmitool out of open files', () => {
  for (const mode of ['process', 'shell'] as const)
    it(`${mode} mode: the call fails local_resources with EMFILE, and the worker lives on`, async () => {
      const { code, err, result } = await probe(mode);
      expect(code, err).toBe(0);
      expect(result?.kind).toBe('local_resources');
      expect(result?.message).toMatch(
        /local_resources: x1000c0s0b0n0 .*EMFILE: this process's open-file limit is reached \(64 files\): the BMC was not asked/,
      );
    });
});
