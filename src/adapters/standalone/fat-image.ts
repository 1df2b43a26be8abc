/**
 * Small FAT filesystem images built in this process with ChaN's FatFs (the js-fatfs package,
 * WebAssembly): f_mkfs formats an empty image of a given size once per size and label (the template,
 * kept in memory), and each image is a copy of it with its files written by FatFs, long names
 * included. An image costs a copy and a few FatFs calls (about 0.1 ms for 64 KiB, 2 ms for 2 MiB), where dosfstools'
 * mkfs.vfat and an mcopy per file cost a process each (about 57 ms, BENCHMARKS.md section 8) and
 * needed both tools where the API runs.
 */
import * as FatFs from 'js-fatfs';

const SECTOR = 512;

/** The disk FatFs reads and writes: whichever image is being filled (the calls are synchronous, so one at a time). */
let disk: Buffer = Buffer.alloc(0);
const diskio: FatFs.DiskIO = {
  initialize: () => 0,
  status: () => 0,
  read(ff, _drive, buff, sector, count) {
    ff.HEAPU8.set(disk.subarray(sector * SECTOR, (sector + count) * SECTOR), buff);
    return FatFs.RES_OK;
  },
  write(ff, _drive, buff, sector, count) {
    disk.set(ff.HEAPU8.subarray(buff, buff + count * SECTOR), sector * SECTOR);
    return FatFs.RES_OK;
  },
  ioctl(ff, _drive, cmd, buff) {
    if (cmd === FatFs.CTRL_SYNC) return FatFs.RES_OK;
    if (cmd === FatFs.GET_SECTOR_COUNT) ff.setValue(buff, disk.length / SECTOR, 'i32');
    else if (cmd === FatFs.GET_SECTOR_SIZE) ff.setValue(buff, SECTOR, 'i16');
    else if (cmd === FatFs.GET_BLOCK_SIZE) ff.setValue(buff, 1, 'i32');
    else return FatFs.RES_PARERR;
    return FatFs.RES_OK;
  },
};
let fatfs: Promise<FatFs.FatFs> | undefined;

function check(code: number, what: string): void {
  if (code !== FatFs.FR_OK) throw new Error(`cannot build the FAT image: ${what} failed (FatFs code ${code})`);
}

/**
 * The volume label, where blkid and cloud-init read it: the boot sector's (BS_VolLab, FAT12/16) and
 * an entry with the volume attribute first in the root folder (this build of FatFs has no f_setlabel).
 * As given, lowercase kept, as mkfs.vfat -n writes it.
 */
function setLabel(img: Buffer, label: string): void {
  const name = Buffer.alloc(11, ' ');
  name.write(label, 'latin1');
  name.copy(img, 43);
  const rootDir = (img.readUInt16LE(14) + img.readUInt8(16) * img.readUInt16LE(22)) * img.readUInt16LE(11);
  img.fill(0, rootDir, rootDir + 32);
  name.copy(img, rootDir);
  img.writeUInt8(0x08, rootDir + 11);
}

/** Empty formatted images by label and size. */
const templates = new Map<string, Buffer>();

function template(ff: FatFs.FatFs, label: string, kib: number): Buffer {
  const key = `${label}/${kib}`;
  let t = templates.get(key);
  if (!t) {
    if (!/^[\x21-\x7e]{1,11}$/.test(label) || /["*+,./:;<=>?[\\\]|]/.test(label)) throw new Error(`not a FAT volume label: ${label}`);
    disk = Buffer.alloc(kib * 1024);
    const work = ff.malloc(FatFs.FF_MAX_SS);
    try {
      check(
        ff.f_mkfs('', { fmt: FatFs.FM_FAT | FatFs.FM_SFD, n_fat: 2, align: 0, n_root: 512, au_size: 0 }, work, FatFs.FF_MAX_SS),
        'formatting',
      );
    } finally {
      ff.free(work);
    }
    setLabel(disk, label);
    t = disk;
    templates.set(key, t);
  }
  return t;
}

/** Why a file does not go on an image of a given size: the next size up is tried. */
class DoesNotFit extends Error {}

/**
 * A FAT image labelled `label` holding `files` (name, contents) in its root folder, of the smallest size
 * in `kibs` (ascending, KiB) they fit in: a drive of a few KiB of text is not copied, written and
 * compressed as megabytes of zeros. Throws an Error naming the file when it fits in none, or naming the
 * step and FatFs's code when FatFs fails otherwise.
 */
export async function fatImage(label: string, kibs: readonly number[], files: Array<[string, string]>): Promise<Buffer> {
  fatfs ??= FatFs.create({ diskio });
  const ff = await fatfs;
  const contents = files.map(([name, text]) => [name, Buffer.from(text)] as const);
  let last: DoesNotFit | undefined;
  for (const kib of kibs) {
    try {
      return fill(ff, label, kib, contents);
    } catch (e) {
      if (!(e instanceof DoesNotFit)) throw e;
      last = e;
    }
  }
  throw new Error(`cannot build the FAT image: ${last?.message ?? 'the files'} does not fit in ${kibs.at(-1) ?? 0} KiB`);
}

function fill(ff: FatFs.FatFs, label: string, kib: number, files: ReadonlyArray<readonly [string, Buffer]>): Buffer {
  // Synchronous from here to the return: no other image can take `disk` meanwhile.
  const empty = template(ff, label, kib);
  // Not Buffer.from: that zero-fills the new buffer before copying over it.
  const img = Buffer.allocUnsafe(empty.length);
  empty.copy(img);
  disk = img;
  const volume = ff.malloc(FatFs.sizeof_FATFS);
  const file = ff.malloc(FatFs.sizeof_FIL);
  const written = ff.malloc(4);
  try {
    check(ff.f_mount(volume, '', 1), 'mounting the empty image');
    for (const [name, bytes] of files) {
      const opened = ff.f_open(file, name, FatFs.FA_WRITE | FatFs.FA_CREATE_NEW);
      // FR_DENIED: no room for the file's directory entry.
      if (opened === FatFs.FR_DENIED) throw new DoesNotFit(name);
      check(opened, `creating ${name}`);
      const data = ff.malloc(bytes.length + 1);
      ff.HEAPU8.set(bytes, data);
      const code = ff.f_write(file, data, bytes.length, written);
      ff.free(data);
      check(code, `writing ${name}`);
      // A full volume is a short write, not an error code.
      if (ff.getValue(written, 'i32') !== bytes.length) throw new DoesNotFit(name);
      check(ff.f_close(file), `closing ${name}`);
    }
    return img;
  } finally {
    ff.f_unmount('');
    ff.free(written);
    ff.free(file);
    ff.free(volume);
    disk = Buffer.alloc(0);
  }
}
