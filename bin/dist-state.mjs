// Whether dist/ (scripts/build.mjs) holds a build of the current sources: 'missing', 'stale' (a file
// under src/ is newer than dist/main.js) or 'fresh'. Without src/ (an image) a build is fresh.
import fs from 'node:fs';

export const DIST_MAIN = new URL('../dist/main.js', import.meta.url);
const SRC = new URL('../src/', import.meta.url);

export function distState() {
  if (!fs.existsSync(DIST_MAIN)) return 'missing';
  if (!fs.existsSync(SRC)) return 'fresh';
  const built = fs.statSync(DIST_MAIN).mtimeMs;
  for (const f of fs.readdirSync(SRC, { recursive: true })) if (fs.statSync(new URL(f, SRC)).mtimeMs > built) return 'stale';
  return 'fresh';
}
