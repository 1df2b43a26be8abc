#!/usr/bin/env node
// `npx bootorch ...`: the compiled CLI (dist/main.js, from `npm run build`) in this process, so signals,
// stdio and the exit code are the CLI's own. Without a build (a fresh clone) the TypeScript sources
// run through tsx's loader instead. A build older than the sources still runs, with a warning: running
// other code than the sources silently would be worse (`npm run bootorch` always runs the sources).
import { DIST_MAIN, distState } from './dist-state.mjs';

const state = distState();
if (state === 'missing') {
  // tsx is a development dependency: an install without them (an image) must have dist/.
  const tsx = await import('tsx/esm/api').catch(() => undefined);
  if (!tsx) {
    process.stderr.write('bootorch: dist/ is missing and tsx (a development dependency) is not installed: run npm run build:dist\n');
    process.exit(1);
  }
  tsx.register();
  await import(new URL('../src/main.ts', import.meta.url).href);
} else {
  if (state === 'stale')
    process.stderr.write('bootorch: dist/ is older than src/: running the old build (npm run build:dist updates it)\n');
  await import(DIST_MAIN.href);
}
