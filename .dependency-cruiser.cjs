/**
 * The layering rule (docs/architecture.md, "The source tree"): a module imports its own layer and the
 * layers below it, never one above. `npm run lint:deps` (CI's habits) checks it:
 *   npx depcruise src --config .dependency-cruiser.cjs
 * Layers, top to bottom; a path is in the first layer whose pattern it matches.
 */
const LAYERS = [
  { name: 'entry', paths: ['^src/main\\.ts$', '^src/migrate\\.ts$'] },
  { name: 'cli', paths: ['^src/cli/'] },
  { name: 'roles', paths: ['^src/roles\\.ts$', '^src/seed\\.ts$'] },
  // The GraphQL door mounts the REST door, which calls the GraphQL root fields: one layer.
  { name: 'doors', paths: ['^src/api/', '^src/rest/', '^src/consoles/', '^src/operators/'] },
  { name: 'engine', paths: ['^src/engine/', '^src/observability/(?!metrics\\.ts$|logging\\.ts$|http\\.ts$|tracing\\.ts$)'] },
  { name: 'ports', paths: ['^src/adapters/', '^src/auth/', '^src/config\\.ts$'] },
  // The metrics registry, logging, tracing and /metrics serving: used from every layer, importing none.
  { name: 'stores', paths: ['^src/db/', '^src/sim/', '^src/reporter/', '^src/observability/(metrics|logging|http|tracing)\\.ts$'] },
  { name: 'domain', paths: ['^src/domain/'] },
];

/**
 * Known exceptions: an import from a lower layer to a higher one that is still there, each with why.
 * Each allows exactly one edge (this file to that file); any other upward import fails.
 */
const EXCEPTIONS = [
  // The boot grants store the node scopes auth defines.
  { from: 'src/db/boot-grants.ts', to: 'src/auth/node-scopes.ts' },
  // The simulator throws the adapters' ServiceError, so its in-process ports fail as the HTTP clients do.
  { from: 'src/sim/world.ts', to: 'src/adapters/errors.ts' },
  // auth's errors reuse the API's "unavailable" error (its store is down).
  { from: 'src/auth/errors.ts', to: 'src/api/unavailable.ts' },
  // The adapters' factory measures every port it makes (observability/ports.ts wraps them).
  { from: 'src/adapters/factory.ts', to: 'src/observability/ports.ts' },
];

const either = (paths) => paths.join('|');
const exactly = (file) => `^${file.replace(/\./g, '\\.')}$`;
const layerOf = (file) => LAYERS.findIndex((l) => l.paths.some((p) => new RegExp(p).test(file)));

const forbidden = [];
LAYERS.forEach((lower, i) => {
  LAYERS.slice(0, i).forEach((upper, j) => {
    const excepted = EXCEPTIONS.filter((e) => layerOf(e.from) === i && layerOf(e.to) === j);
    const name = `${lower.name}-imports-${upper.name}`;
    const comment = `${lower.name} is below ${upper.name}: layers import downwards only (docs/architecture.md)`;
    forbidden.push({
      name,
      comment,
      severity: 'error',
      from: { path: either(lower.paths), ...(excepted.length ? { pathNot: either(excepted.map((e) => exactly(e.from))) } : {}) },
      to: { path: either(upper.paths) },
    });
    // An excepted file may import its one excepted module from that layer, nothing else.
    for (const e of excepted) {
      forbidden.push({
        name,
        comment,
        severity: 'error',
        from: { path: exactly(e.from) },
        to: { path: either(upper.paths), pathNot: exactly(e.to) },
      });
    }
  });
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...forbidden,
    {
      name: 'no-unresolvable',
      comment: 'an import that resolves to nothing',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/api/generated/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
