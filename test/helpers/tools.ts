/**
 * The Debian tools some tests drive for real (ipmitool, ipmi_sim, busybox, mkfs.vfat, mcopy, blkid,
 * qemu-img). `.ci/run` installs them all; on a machine without one, the tests that need it are skipped
 * and say which package brings it, instead of failing for a missing binary. Under CI (CI=true) a
 * missing tool fails the test file instead: there it means the install step broke.
 */
import { spawnSync } from 'node:child_process';

/** The package each tool comes from (Debian). */
const PACKAGE: Record<string, string> = {
  ipmitool: 'ipmitool',
  ipmi_sim: 'openipmi',
  busybox: 'busybox-static',
  'mkfs.vfat': 'dosfstools',
  mcopy: 'mtools',
  mtype: 'mtools',
  blkid: 'util-linux',
  'qemu-img': 'qemu-utils',
  patroni: 'patroni',
  etcd: 'etcd-server',
  haproxy: 'haproxy',
};

/** True when every tool is on the PATH; otherwise false, after saying what `what` skips and why. */
export function haveTools(what: string, tools: string[]): boolean {
  const missing = tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length === 0) return true;
  const packages = [...new Set(missing.map((t) => PACKAGE[t] ?? t))].join(' ');
  // CI installs every one of them: a missing tool there is a broken install step, not a skip.
  if (process.env.CI === 'true') throw new Error(`${what}: ${missing.join(', ')} missing under CI (apt-get install ${packages})`);
  console.info(`${what} skipped: needs ${missing.join(', ')} (apt-get install ${packages})`);
  return false;
}
