/**
 * Subscription resolvers (schema/live.graphql): componentEvents and sessionProgress, served by the
 * process's live feed (src/api/live/). Pub/sub iterators are hand-written AsyncIterators whose
 * return() detaches at once (stack-notes §3), not async generators.
 */
import { liveResolvers } from './live/resolvers.ts';

export const subscriptionResolvers: Record<string, unknown> = liveResolvers as Record<string, unknown>;
