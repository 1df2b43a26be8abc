/**
 * A small bootable disk image for the disk deploy VM test, built without root (no loop mounts): one
 * FAT16 partition made as a file (dosfstools' mkfs.vfat), the kernel, initrd and syslinux.cfg copied
 * in with mtools, SYSLINUX installed into it (`syslinux --install`, the mtools variant), then the
 * disk assembled: syslinux's MBR boot code, one bootable partition entry at 1 MiB, the partition.
 * Needs syslinux, syslinux-common, mtools and dosfstools (Debian packages).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';

const MBR = '/usr/lib/syslinux/mbr/mbr.bin';
const START = 2048; // sectors: the partition starts at 1 MiB

export function buildDiskImage(out: string, o: { kernel: string; initrd: string; append: string }): void {
  const part = `${out}.part`;
  const mib = Math.ceil((statSync(o.kernel).size + statSync(o.initrd).size) / 2 ** 20) + 4;
  rmSync(part, { force: true });
  // -h: the sectors before the partition, so the boot sector knows where it is on the disk.
  execFileSync('mkfs.vfat', ['-F', '16', '-h', String(START), '-n', 'INSTALLED', '-C', part, String(mib * 1024)], { stdio: 'pipe' });
  const cfg = `${out}.syslinux.cfg`;
  writeFileSync(cfg, `DEFAULT linux\nPROMPT 0\nTIMEOUT 0\nLABEL linux\n  KERNEL vmlinuz\n  APPEND initrd=initrd.gz ${o.append}\n`);
  for (const [from, to] of [
    [o.kernel, 'vmlinuz'],
    [o.initrd, 'initrd.gz'],
    [cfg, 'syslinux.cfg'],
  ])
    execFileSync('mcopy', ['-i', part, from!, `::${to}`], { stdio: 'pipe' });
  execFileSync('syslinux', ['--install', part], { stdio: 'pipe' });

  const sectors = statSync(part).size / 512;
  const mbr = Buffer.alloc(START * 512);
  readFileSync(MBR).copy(mbr, 0, 0, 440);
  const entry = Buffer.alloc(16);
  entry[0] = 0x80; // bootable
  entry.set([0xfe, 0xff, 0xff], 1); // CHS: use LBA
  entry[4] = 0x0e; // FAT16, LBA
  entry.set([0xfe, 0xff, 0xff], 5);
  entry.writeUInt32LE(START, 8);
  entry.writeUInt32LE(sectors, 12);
  entry.copy(mbr, 446);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  const fd = openSync(out, 'w');
  writeSync(fd, mbr);
  writeSync(fd, readFileSync(part));
  closeSync(fd);
  rmSync(part);
  rmSync(cfg);
}
