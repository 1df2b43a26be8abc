/**
 * A config drive is as large as its files need, read back with mtools (not with the FatFs that wrote
 * it): 64 KiB for the usual few KiB of cloud-init, 256 KiB for 64 KiB of ASCII user-data and
 * meta-data each; larger when the fields' 65,536 characters are multi-byte; an error naming the file when the
 * files fit in no size.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConfigDrive, CONFIG_DRIVE_KIBS } from '../../src/adapters/standalone/config-drive.ts';
import { fatImage } from '../../src/adapters/standalone/fat-image.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'bootorch-drive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function read(image: Buffer, file: string): string {
  const at = path.join(dir, `drive-${n++}.img`);
  writeFileSync(at, image);
  return execFileSync('mtype', ['-i', at, `::${file}`], {
    encoding: 'utf8',
    maxBuffer: 4 * 2 ** 20,
    env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
  });
}

describe('config drive size', () => {
  it('is 64 KiB for a few KiB of cloud-init, its files intact, its label cidata', async () => {
    const drive = await buildConfigDrive({ user_data: '#cloud-config\nhostname: n0\n', meta_data: '' }, 'x1000c0s0b0n0', undefined, [
      ['bootorch-ticket', 'btk_x\n'],
    ]);
    expect(drive.length).toBe(64 * 1024);
    const at = path.join(dir, 'small.img');
    writeFileSync(at, drive);
    expect(execFileSync('blkid', ['-o', 'export', at], { encoding: 'utf8' })).toMatch(/^LABEL=cidata$/m);
    expect(read(drive, 'user-data')).toBe('#cloud-config\nhostname: n0\n');
    expect(read(drive, 'meta-data')).toBe('instance-id: x1000c0s0b0n0\nlocal-hostname: x1000c0s0b0n0\n');
    expect(read(drive, 'bootorch-ticket')).toBe('btk_x\n');
  });

  it('is 256 KiB for 64 KiB of ASCII user-data and meta-data each', async () => {
    const userData = 'u'.repeat(65536);
    const metaData = 'm'.repeat(65536);
    const drive = await buildConfigDrive({ user_data: userData, meta_data: metaData }, 'x1000c0s0b0n0', undefined);
    expect(drive.length).toBe(256 * 1024);
    expect(read(drive, 'user-data')).toBe(userData);
    expect(read(drive, 'meta-data')).toBe(metaData);
  });

  it("grows for the fields' 65,536 characters in three UTF-8 bytes each, and holds them", async () => {
    const userData = '€'.repeat(65536);
    const metaData = '語'.repeat(65536);
    const drive = await buildConfigDrive({ user_data: userData, meta_data: metaData }, 'x1000c0s0b0n0', undefined);
    expect(drive.length).toBeGreaterThan(256 * 1024);
    expect(drive.length).toBeLessThanOrEqual(1024 * 1024);
    expect(read(drive, 'user-data')).toBe(userData);
    expect(read(drive, 'meta-data')).toBe(metaData);
  });

  it('fails naming the file when the files fit in no size', async () => {
    await expect(
      fatImage(
        'cidata',
        [256],
        [
          ['small', 'a'],
          ['big', 'b'.repeat(300 * 1024)],
        ],
      ),
    ).rejects.toThrow('cannot build the FAT image: big does not fit in 256 KiB');
    // Just over what the smallest size holds: the next one.
    const image = await fatImage('cidata', CONFIG_DRIVE_KIBS, [['big', 'b'.repeat(250 * 1024)]]);
    expect(image.length).toBe(512 * 1024);
    expect(read(image, 'big')).toBe('b'.repeat(250 * 1024));
  });
});
