/**
 * The node table beside the map: the same filters, searched, sorted and paged by the API (keyset on
 * indexed columns, so page 2,000 of 100,000 nodes costs what page 1 does), re-read every few seconds
 * while the machine changes. It is also the map's keyboard path and text alternative: every node the
 * map shows can be reached, read and opened from here.
 *
 * It can also narrow by last change (changed in the last 5 min, not changed for an hour, ...), which
 * the API counts back from its database's clock; the map has no time per node and is not dimmed by it.
 *
 * Operators select rows (or every node the filters match) and act on them: retry the failed ones (a
 * new session of just them, dry run first), clear a failure and enable, or reboot them.
 */
import { useEffect, useState } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { EnableNodesMutation, NodeTableQuery } from '../queries.ts';
import type { ComponentOrder } from '../gql/graphql.ts';
import type { NodeStore } from '../map/store.ts';
import { useStoreIds, useStoreVersion } from '../live/use-store.ts';
import { canOperate, useIdentity } from '../auth.tsx';
import { NodeStatus, ago, words } from '../ui/badges.tsx';
import { RunNodesDialog, type RunNodesRequest } from '../ui/RunNodesDialog.tsx';
import { CHANGED, allIds, tableFilter, type Filters } from './filters.ts';

const PAGE = 50;
/** "Select all matching" goes up to this many nodes (a session's limit holds about 35,000 xnames). */
const SELECT_ALL_MAX = 20_000;

const COLUMNS: [ComponentOrder, string][] = [
  ['ID', 'Node'],
  ['STATUS', 'Status'],
  ['PHASE', 'Phase'],
  ['SESSION', 'Session'],
  ['FAILURE_REASON', 'Failure'],
  ['LAST_CHANGE', 'Changed'],
];

interface Picked {
  failed: boolean;
  session: string;
}

export function NodeTable({ store, filters }: { store: NodeStore; filters: Filters }) {
  const who = useIdentity();
  const client = useClient();
  const [order, setOrder] = useState<{ by: ComponentOrder; descending: boolean }>({ by: 'ID', descending: false });
  const [pages, setPages] = useState<(string | null)[]>([null]);
  const [picked, setPicked] = useState(new Map<string, Picked>());
  const [run, setRun] = useState<RunNodesRequest | null>(null);
  const [note, setNote] = useState('');
  const [enabled, enable] = useMutation(EnableNodesMutation);
  const [changed, setChanged] = useState('');
  const filter = { ...tableFilter(filters), ...CHANGED.find((c) => c.value === changed)?.bound };
  const key = JSON.stringify([filter, order]);
  // A new search, filter or order starts at page 1 with nothing selected.
  // biome-ignore lint/correctness/useExhaustiveDependencies: key stands for filter and order
  useEffect(() => {
    setPages([null]);
    setPicked(new Map());
  }, [key]);
  // Asked once the map has its snapshot: the map's first paint does not wait behind the table.
  useStoreIds(store);
  const mapped = store.loaded;
  const [r, refetch] = useQuery({
    query: NodeTableQuery,
    variables: { filter, first: PAGE, after: pages.at(-1) ?? null, orderBy: order.by, descending: order.descending },
    pause: !mapped,
  });
  const version = useStoreVersion(store, 2000);
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-read when the live store changed
  useEffect(() => {
    if (version) refetch({ requestPolicy: 'network-only' });
  }, [version]);

  const page = r.data?.components;
  const rows = page?.nodes ?? [];
  const operator = canOperate(who);
  const pick = (id: string, p: Picked | null) =>
    setPicked((m) => {
      const n = new Map(m);
      if (p) n.set(id, p);
      else n.delete(id);
      return n;
    });
  const selectAll = async () => {
    const all = new Map<string, Picked>();
    try {
      for (const id of await allIds(client, filter)) all.set(id, { failed: false, session: '' });
    } catch (e) {
      return setNote((e as Error).message);
    }
    // Their statuses and sessions for the actions: from the live store (the map's copy of every node).
    for (const [id, p] of all) {
      const i = store.index.get(id);
      if (i !== undefined) {
        p.failed = store.apiStatus[i] === 'FAILED';
        p.session = store.session[i] ?? '';
      }
    }
    setPicked(all);
  };
  const ids = [...picked.keys()];
  const failed = ids.filter((id) => picked.get(id)!.failed);
  const sessionOf = (list: string[]) => {
    const names = new Set(list.map((id) => picked.get(id)!.session).filter(Boolean));
    return names.size === 1 ? [...names][0] : undefined;
  };
  const enableSelected = async () => {
    if (
      !window.confirm(
        `Clear the failure of ${ids.length} nodes and enable them? bootorch takes each from where it is to its desired state.`,
      )
    )
      return;
    const x = await enable({ ids });
    setNote(x.error ? x.error.message : `${ids.length} nodes enabled.`);
    if (!x.error) setPicked(new Map());
  };

  return (
    <section className="nodetable" aria-labelledby="nodetable-title" data-testid="node-table">
      <h2 id="nodetable-title">
        Nodes{' '}
        <span className="muted" data-testid="node-count">
          {page ? `${page.totalCount.toLocaleString()} match` : ''}
        </span>
      </h2>
      <label className="changed">
        Last change{' '}
        <select value={changed} onChange={(e) => setChanged(e.target.value)}>
          {CHANGED.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      {operator && (
        <fieldset className="bulk">
          <legend className="visually-hidden">Actions on the selected nodes</legend>
          <span>{ids.length ? `${ids.length} selected` : 'Select nodes to act on them'}</span>
          {page && page.totalCount > 0 && page.totalCount <= SELECT_ALL_MAX && (
            <button type="button" onClick={() => void selectAll()}>
              Select all {page.totalCount.toLocaleString()}
            </button>
          )}
          <button
            type="button"
            disabled={!failed.length}
            onClick={() => setRun({ title: `Retry ${failed.length} failed nodes`, ids: failed, fromSession: sessionOf(failed) })}
          >
            Retry {failed.length} failed…
          </button>
          <button type="button" disabled={!ids.length || enabled.fetching} onClick={() => void enableSelected()}>
            Clear failure and enable
          </button>
          <button
            type="button"
            disabled={!ids.length}
            onClick={() => setRun({ title: `Reboot ${ids.length} nodes`, ids, operation: 'REBOOT', fromSession: sessionOf(ids) })}
          >
            Reboot…
          </button>
          {ids.length > 0 && (
            <button type="button" onClick={() => setPicked(new Map())}>
              Clear selection
            </button>
          )}
        </fieldset>
      )}
      {note && <p role="status">{note}</p>}
      {r.error && <p className="error">{r.error.graphQLErrors[0]?.message ?? r.error.message}</p>}
      <div className="tablewrap">
        <table>
          <caption className="visually-hidden">
            Nodes matching the search and filters, {order.by.toLowerCase().replace('_', ' ')} order
          </caption>
          <thead>
            <tr>
              {operator && (
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="select this page"
                    checked={rows.length > 0 && rows.every((n) => picked.has(n.id))}
                    onChange={(e) => {
                      for (const n of rows)
                        pick(n.id, e.target.checked ? { failed: n.status.status === 'FAILED', session: n.session } : null);
                    }}
                  />
                </th>
              )}
              {COLUMNS.map(([by, label]) => (
                <th key={by} scope="col" aria-sort={order.by === by ? (order.descending ? 'descending' : 'ascending') : undefined}>
                  <button
                    type="button"
                    className="sort"
                    onClick={() => setOrder((o) => ({ by, descending: o.by === by ? !o.descending : by === 'LAST_CHANGE' }))}
                  >
                    {label}
                    <span aria-hidden="true">{order.by === by ? (order.descending ? ' ▼' : ' ▲') : ''}</span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((n) => (
              <tr key={n.id} data-node={n.id}>
                {operator && (
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`select ${n.id}`}
                      checked={picked.has(n.id)}
                      onChange={(e) => pick(n.id, e.target.checked ? { failed: n.status.status === 'FAILED', session: n.session } : null)}
                    />
                  </td>
                )}
                <td className="mono">
                  <Link href={`/node/${n.id}`}>{n.id}</Link>
                </td>
                <td>
                  <NodeStatus status={n.status.status} phase={n.status.phase} />
                </td>
                <td>{n.status.phase === 'NONE' ? '—' : words(n.status.phase)}</td>
                <td>{n.session ? <Link href={`/sessions/${n.session}`}>{n.session}</Link> : '—'}</td>
                <td title={n.error}>
                  {!n.failureReason ? '' : n.status.status === 'FAILED' ? words(n.failureReason) : `held up: ${words(n.failureReason)}`}
                </td>
                <td>{ago(n.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {page && !rows.length && <p className="muted">No node matches.</p>}
      </div>
      <nav className="pager" aria-label="pages of the node table">
        <button type="button" disabled={pages.length < 2} onClick={() => setPages((p) => p.slice(0, -1))}>
          Previous
        </button>
        <span>page {pages.length}</span>
        <button
          type="button"
          disabled={!page?.pageInfo.hasNextPage}
          onClick={() => setPages((p) => [...p, page!.pageInfo.endCursor ?? null])}
        >
          Next
        </button>
      </nav>
      {run && <RunNodesDialog request={run} onClose={() => setRun(null)} />}
    </section>
  );
}
