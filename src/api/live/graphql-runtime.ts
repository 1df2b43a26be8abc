/**
 * graphql's CommonJS build, the one Apollo, graphql-ws and graphql-tools load. Bundlers that prefer
 * its `module` build (vitest) would otherwise hand graphql-ws (or the live multiplexer) an execute()
 * that rejects a schema made by the other copy ("from another module or realm"). Under node/tsx both
 * names are the same module.
 */
import { createRequire } from 'node:module';

export const graphqlRuntime = createRequire(import.meta.url)('graphql') as typeof import('graphql');
