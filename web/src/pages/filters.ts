/**
 * The machine page's one set of filters, read by both the map (in the browser, over the live store)
 * and the node table (by the API, as a ComponentFilter): what one shows, the other shows.
 *
 * The search is an xname or its start (`x1000c0s1`: a prefix of ids), or else a BOS limit expression
 * (`compute-a`, `compute,!x1000c0s0b0n0`) that the API resolves against the inventory.
 */
import type { Client, OperationResult } from 'urql';
import type { ComponentFilter, ComponentPhase, ComponentStatus, ConsoleNodeIdsQuery } from '../gql/graphql.ts';
import type { NodeStore } from '../map/store.ts';
import { NodeIdsQuery } from '../queries.ts';

export type Search = { kind: 'prefix'; text: string } | { kind: 'limit'; text: string; members: Set<string> };

export interface Filters {
  search: Search | null;
  /** GraphQL enum names; '' for any. */
  status: string;
  phase: string;
  reason: string;
  session: string;
}

export const NO_FILTERS: Filters = { search: null, status: '', phase: '', reason: '', session: '' };

const XNAME_START = /^x\d+(c\d+(s\d+(b\d+(n\d+)?)?)?)?$/i;

/** What the search box's text means; a limit is resolved to its members (ids) through the API. */
export async function parseSearch(client: Client, text: string): Promise<Search | null> {
  const t = text.trim();
  if (!t) return null;
  if (XNAME_START.test(t)) return { kind: 'prefix', text: t.toLowerCase() };
  return { kind: 'limit', text: t, members: new Set(await allIds(client, { limit: t })) };
}

/** Every id the filter matches (10,000 to a page), in id order; the API's error as an Error. */
export async function allIds(client: Client, filter: ComponentFilter): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const r: OperationResult<ConsoleNodeIdsQuery> = await client.query(NodeIdsQuery, { filter, after }).toPromise();
    if (r.error) throw new Error(r.error.graphQLErrors[0]?.message ?? r.error.message);
    const page = r.data!.components;
    for (const n of page.nodes) ids.push(n.id);
    if (!page.pageInfo.hasNextPage) return ids;
    after = page.pageInfo.endCursor ?? null;
  }
}

export function tableFilter(f: Filters): ComponentFilter {
  return {
    ...(f.search?.kind === 'prefix' ? { idPrefix: f.search.text } : {}),
    ...(f.search?.kind === 'limit' ? { limit: f.search.text } : {}),
    ...(f.status ? { status: [f.status as ComponentStatus] } : {}),
    ...(f.phase ? { phase: f.phase as ComponentPhase } : {}),
    ...(f.reason ? { failureReason: [f.reason] } : {}),
    ...(f.session ? { session: f.session } : {}),
  };
}

/**
 * The node table's last-change filter (the table's alone: the map keeps no time per node), as the
 * API's bounds in seconds, counted back from the database's clock at each read.
 */
export const CHANGED: { value: string; label: string; bound: Pick<ComponentFilter, 'changedWithinSeconds' | 'unchangedForSeconds'> }[] = [
  { value: '', label: 'changed any time', bound: {} },
  { value: '5m', label: 'changed in the last 5 min', bound: { changedWithinSeconds: 300 } },
  { value: '1h', label: 'changed in the last hour', bound: { changedWithinSeconds: 3_600 } },
  { value: '24h', label: 'changed in the last 24 h', bound: { changedWithinSeconds: 86_400 } },
  { value: 'old1h', label: 'not changed for 1 h', bound: { unchangedForSeconds: 3_600 } },
  { value: 'old24h', label: 'not changed for 24 h', bound: { unchangedForSeconds: 86_400 } },
];

/** Whether the map keeps node i (read at paint time, so live changes are filtered too); null keeps all. */
export function mapKeep(f: Filters, store: NodeStore): ((i: number) => boolean) | null {
  if (!f.search && !f.status && !f.phase && !f.reason && !f.session) return null;
  const s = f.search;
  return (i) =>
    (!s || (s.kind === 'prefix' ? store.ids[i]!.startsWith(s.text) : s.members.has(store.ids[i]!))) &&
    (!f.status || store.apiStatus[i] === f.status) &&
    (!f.phase || store.phase[i] === f.phase) &&
    (!f.reason || store.reason[i] === f.reason) &&
    (!f.session || store.session[i] === f.session);
}
