/**
 * Subscription resolvers (none yet). To add some: declare `type Subscription { ... }` in
 * schema/subscriptions.graphql, run `npm run codegen`, and export them here; graphql-ws is already
 * serving /graphql (server.ts). Pub/sub iterators should be hand-written AsyncIterators whose return()
 * detaches at once (stack-notes §3), not async generators.
 */
export const subscriptionResolvers: Record<string, unknown> = {};
