/**
 * How graphql-ws runs a subscription here (its `subscribe` option). The field's `subscribe` resolver
 * runs per subscriber as usual (authorization, argument checks); then:
 * - a LiveSubscriber (componentEvents, componentEventBatches) joins its multiplexer group: live
 *   payloads come executed and serialized once per group (SharedResult, written by ws-server.ts), and
 *   what it reads from the log is executed for it alone;
 * - any other source (sessionProgress) is executed per value, as graphql's own subscribe() does.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { graphqlRuntime } from './graphql-runtime.ts';
import type { Multiplexer } from './multiplexer.ts';
import { LiveSubscriber, type Delivery, type SharedPayload } from './subscriber.ts';

/** A result already serialized for a whole group; ws-server.ts writes its bytes as the payload. */
export class SharedResult implements ExecutionResult {
  /** Never read: the payload's bytes are `shared.json`. */
  data?: null;
  constructor(readonly shared: SharedPayload) {}
}

type Source = AsyncIterator<unknown> & { return?(): Promise<IteratorResult<unknown>> };

/** Maps each value of a source through `map`; return() reaches the source at once (stack notes §3). */
class Mapped implements AsyncIterableIterator<ExecutionResult> {
  constructor(
    private readonly source: Source,
    private readonly map: (v: unknown) => ExecutionResult | Promise<ExecutionResult>,
  ) {}
  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }
  async next(): Promise<IteratorResult<ExecutionResult>> {
    const r = await this.source.next();
    return r.done ? { value: undefined, done: true } : { value: await this.map(r.value), done: false };
  }
  async return(): Promise<IteratorResult<ExecutionResult>> {
    await this.source.return?.();
    return { value: undefined, done: true };
  }
  async throw(e?: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.source.return?.();
    throw e;
  }
}

export function liveSubscribe(mux: Multiplexer) {
  return async (args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> => {
    const source = await graphqlRuntime.createSourceEventStream(args);
    if (!(Symbol.asyncIterator in Object(source))) return source as ExecutionResult;
    const own = (root: unknown) => graphqlRuntime.execute({ ...args, rootValue: root });
    if (source instanceof LiveSubscriber) {
      mux.add(source, args);
      return new Mapped(source, (d) => {
        const x = d as Delivery;
        return x.kind === 'shared' ? new SharedResult(x) : own(x.root);
      });
    }
    return new Mapped(source as Source, own);
  };
}
