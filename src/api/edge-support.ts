/**
 * The small parts of the API's edge (edge.ts): client addresses, caches, error shapes, and what a
 * document asks for at its root.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type { DocumentNode, FragmentDefinitionNode, GraphQLError as GraphQLErrorType, OperationDefinitionNode } from 'graphql';
import type { RateLimitResult } from '../auth/index.ts';
import type { DocumentCheck } from './limits.ts';

/** graphql's CommonJS build (see server.ts): graphql-ws checks errors with its own GraphQLError class. */
export const gql = createRequire(import.meta.url)('graphql') as typeof import('graphql');

/**
 * The client address for rate limiting: the socket's peer, or the first untrusted address in
 * X-Forwarded-For when proxies are trusted. IPv4-mapped IPv6 is shown as IPv4; other IPv6 addresses
 * count per /64, the smallest block one site usually gets.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (isIP(address) !== 6) return address;
  const [head, tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const full = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((h) => h.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** A small LRU of document checks, by budget and query text: hot queries (node reports) are checked once. */
export class CheckCache {
  private readonly entries = new Map<string, DocumentCheck>();
  constructor(private readonly max = 1000) {}
  get(key: string): DocumentCheck | undefined {
    const v = this.entries.get(key);
    if (v) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }
  set(key: string, v: DocumentCheck): void {
    this.entries.set(key, v);
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The GraphQL error as graphql-ws and the HTTP answer want it: the runtime's class, no `http` extension. */
export function runtimeError(message: string, extensions: Record<string, unknown>): GraphQLErrorType {
  return new gql.GraphQLError(message, { extensions });
}

export function rateLimited(r: Extract<RateLimitResult, { ok: false }>): GraphQLErrorType {
  return runtimeError(r.reason, { code: 'RATE_LIMITED', retryAfterSeconds: r.retryAfterSeconds });
}

/** WebSocket close reasons are at most 123 bytes. */
export function closeReason(s: string): string {
  const b = Buffer.from(s, 'utf8');
  return b.length <= 123
    ? s
    : `${b
        .subarray(0, 120)
        .toString('utf8')
        .replace(/\uFFFD+$/, '')}...`;
}

/** The root fields an operation selects, through inline fragments and fragment spreads (each fragment once). */
export function rootFields(document: DocumentNode, op: OperationDefinitionNode): string[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === gql.Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const out: string[] = [];
  const seen = new Set<string>();
  const stack = [op.selectionSet];
  while (stack.length) {
    for (const s of stack.pop()!.selections) {
      if (s.kind === gql.Kind.FIELD) out.push(s.name.value);
      else if (s.kind === gql.Kind.INLINE_FRAGMENT) stack.push(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const f = fragments.get(s.name.value);
        if (f) stack.push(f.selectionSet);
      }
    }
  }
  return out;
}

/**
 * Apollo's persisted-query store: a bounded LRU in memory (entries and characters), readable by the
 * edge so that a hash-only request is checked against its caller's budget like any other.
 */
export class PersistedQueries {
  private readonly entries = new Map<string, string>();
  private chars = 0;
  constructor(
    private readonly maxEntries = 1000,
    private readonly maxChars = 8 * 1024 * 1024,
  ) {}
  async get(key: string): Promise<string | undefined> {
    const v = this.entries.get(key);
    if (v !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }
  async set(key: string, value: string): Promise<void> {
    await this.delete(key);
    if (value.length > this.maxChars) return;
    this.entries.set(key, value);
    this.chars += value.length;
    while (this.entries.size > this.maxEntries || this.chars > this.maxChars) {
      const [k, v] = this.entries.entries().next().value!;
      this.entries.delete(k);
      this.chars -= v.length;
    }
  }
  async delete(key: string): Promise<boolean> {
    const v = this.entries.get(key);
    if (v === undefined) return false;
    this.entries.delete(key);
    this.chars -= v.length;
    return true;
  }
}
