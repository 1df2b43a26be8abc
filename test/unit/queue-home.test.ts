/**
 * The job machinery has one home: every statement against pg-boss's tables is in src/engine/queue/
 * (issue 35). This reads every source file under src/ and bench/ and fails naming the files, outside
 * that folder and the migrations, that mention pg-boss's schema.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(ROOT, 'src');
const BENCH = path.join(ROOT, 'bench');
const HOME = path.join(SRC, 'engine', 'queue') + path.sep;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|tsx|js|mjs|cjs|sql)$/.test(e.name) ? [p] : [];
  });
}

/** Files under `roots` outside the queue's home that name a pg-boss table (`pgboss.` or `${BOSS_SCHEMA}.`). */
function strays(...roots: string[]): string[] {
  return roots
    .flatMap((r) => sources(r))
    .filter((f) => !f.startsWith(HOME) && !f.includes(`${path.sep}migrations${path.sep}`))
    .filter((f) => /\bpgboss\.|\$\{\s*(sql\.raw\()?\s*BOSS_SCHEMA/.test(fs.readFileSync(f, 'utf8')))
    .map((f) => path.relative(ROOT, f));
}

test('no file under src/ or bench/ outside src/engine/queue/ touches pg-boss tables', () => {
  expect(strays(SRC, BENCH)).toEqual([]);
});

test('the check finds a stray statement (it can fail)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-home-'));
  try {
    fs.writeFileSync(path.join(dir, 'stray.ts'), "export const q = 'select * from pgboss.job';\n");
    fs.writeFileSync(path.join(dir, 'clean.ts'), "export const q = 'select * from components';\n");
    expect(strays(dir).map((f) => path.basename(f))).toEqual(['stray.ts']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
