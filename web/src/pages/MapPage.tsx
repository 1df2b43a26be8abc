/**
 * The machine at a glance: the map with a legend of live counts per status, and beside it the node
 * table. One set of filters drives both: a search (an xname or its start, or a group / BOS limit
 * expression, resolved by the API), status, phase, failure reason and session. Nodes the filters
 * leave out stay on the map, dimmed; a node found by its xname is ringed on the map.
 */
import { useMemo, useState } from 'react';
import { useClient } from 'urql';
import { useLocation } from 'wouter';
import { MapCanvas } from '../map/MapCanvas.tsx';
import { STATUSES, STATUS_COLOR, STATUS_LABEL } from '../map/colors.ts';
import type { NodeStore } from '../map/store.ts';
import { useStoreIds, useStoreVersion } from '../live/use-store.ts';
import { NodeTable } from './NodeTable.tsx';
import { NO_FILTERS, mapKeep, parseSearch, type Filters } from './filters.ts';
import { words } from '../ui/badges.tsx';

const API_STATUSES = [
  'STABLE',
  'POWER_OFF_PENDING',
  'POWER_OFF_GRACEFULLY_CALLED',
  'POWER_OFF_FORCEFULLY_CALLED',
  'POWER_ON_PENDING',
  'POWER_ON_CALLED',
  'CONFIGURING',
  'QUEUED',
  'ON_HOLD',
  'FAILED',
];
const PHASES = ['NONE', 'POWERING_OFF', 'POWERING_ON', 'CONFIGURING', 'DEPLOYING', 'WRITING', 'SWITCHING_TO_DISK', 'BOOTING_DISK'];

export function MapPage({ store }: { store: NodeStore }) {
  const ids = useStoreIds(store);
  const version = useStoreVersion(store, 1000);
  const [, navigate] = useLocation();
  const client = useClient();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [searchText, setSearchText] = useState('');
  const [searchError, setSearchError] = useState('');
  const [searching, setSearching] = useState(false);
  const [hover, setHover] = useState<{ i: number; x: number; y: number } | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the store is mutated in place; version and ids say when it changed
  const { sessions, reasons } = useMemo(
    () => ({
      sessions: [...new Set(store.session.filter(Boolean))].sort(),
      reasons: [...new Set(store.reason.filter(Boolean))].sort(),
    }),
    [store, version, ids],
  );
  const keep = useMemo(() => mapKeep(filters, store), [filters, store]);
  const set = (k: keyof Filters, v: string) => setFilters((f) => ({ ...f, [k]: v }));

  const search = async () => {
    setSearchError('');
    setSearching(true);
    try {
      const s = await parseSearch(client, searchText);
      setFilters((f) => ({ ...f, search: s }));
    } catch (e) {
      setSearchError((e as Error).message);
    } finally {
      setSearching(false);
    }
  };
  const s = filters.search;
  const focus = s?.kind === 'prefix' && store.index.has(s.text) ? s.text : null;
  const found = s ? (s.kind === 'limit' ? s.members.size : store.ids.filter((id) => id.startsWith(s.text)).length) : 0;

  const h = hover ? hover.i : null;
  return (
    <div className="mappage">
      <h1 className="visually-hidden">The machine</h1>
      <div className="filters">
        <search>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void search();
            }}
          >
            <input
              aria-label="search"
              placeholder="xname (x1000c0s1b0n0, x1000c0), group or limit (compute-a, all,!x1000c0)"
              value={searchText}
              onChange={(e) => setSearchText(e.target.value)}
            />
            <button type="submit" disabled={searching}>
              Search
            </button>
            {s && (
              <span className="chip" data-testid="search-chip">
                {s.text}: {found.toLocaleString()}
              </span>
            )}
            {searchError && (
              <span className="error" role="alert">
                {searchError}
              </span>
            )}
          </form>
        </search>
        <select aria-label="status" value={filters.status} onChange={(e) => set('status', e.target.value)}>
          <option value="">all statuses</option>
          {API_STATUSES.map((x) => (
            <option key={x} value={x}>
              {words(x)}
            </option>
          ))}
        </select>
        <select aria-label="phase" value={filters.phase} onChange={(e) => set('phase', e.target.value)}>
          <option value="">all phases</option>
          {PHASES.map((x) => (
            <option key={x} value={x}>
              {x === 'NONE' ? 'no phase' : words(x)}
            </option>
          ))}
        </select>
        <select aria-label="failure reason" value={filters.reason} onChange={(e) => set('reason', e.target.value)}>
          <option value="">any failure reason</option>
          {reasons.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <select aria-label="session" value={filters.session} onChange={(e) => set('session', e.target.value)}>
          <option value="">all sessions</option>
          {sessions.map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      </div>
      <div className="machine">
        <div className="mapside">
          <Legend store={store} total={ids.length} />
          <div className="mapwrap">
            <MapCanvas
              store={store}
              ids={ids}
              keep={keep}
              focus={focus}
              label={mapWords(store, ids.length)}
              onHover={(i, x, y) => setHover(i === null ? null : { i, x, y })}
              onOpen={(id) => navigate(`/node/${id}`)}
            />
            {h !== null && hover && (
              <div
                className="tip"
                data-testid="map-tip"
                role="status"
                style={{ left: Math.min(hover.x + 14, window.innerWidth - 240), top: Math.min(hover.y + 14, window.innerHeight - 90) }}
              >
                <b>{store.ids[h]}</b>
                <br />
                {STATUS_LABEL[STATUSES[store.status[h]!]!]}
                {store.phase[h] && store.phase[h] !== 'NONE' ? ` · ${words(store.phase[h])}` : ''}
                {store.session[h] && (
                  <>
                    <br />
                    session {store.session[h]}
                  </>
                )}
                {store.reason[h] && (
                  <>
                    <br />
                    {/* A reason on a node still worked on is trouble it waits out (a service, a retry), not a failure. */}
                    {store.apiStatus[h] === 'FAILED' ? (
                      <span className="error">failed: {words(store.reason[h])}</span>
                    ) : (
                      <span>held up: {words(store.reason[h])}</span>
                    )}
                  </>
                )}
              </div>
            )}
          </div>
        </div>
        <NodeTable store={store} filters={filters} />
      </div>
    </div>
  );
}

/** The map's text alternative: what it shows, in counts. */
function mapWords(store: NodeStore, total: number): string {
  const counts = store.counts();
  const parts = STATUSES.map((s, k) => [STATUS_LABEL[s], counts[k]!] as const).filter(([, n]) => n > 0);
  return `Machine map of ${total.toLocaleString()} nodes: ${parts.map(([l, n]) => `${n.toLocaleString()} ${l}`).join(', ')}. Arrow keys walk the nodes, Enter opens one; the node table beside it lists them all.`;
}

/** Counts per status, re-read every animation frame, in step with the map. */
function Legend({ store, total }: { store: NodeStore; total: number }) {
  useStoreVersion(store, 0);
  const counts = store.counts();
  return (
    <ul className="legend" data-testid="legend" aria-label="nodes per status">
      {STATUSES.map((s, k) => (
        <li key={s} className={counts[k] ? '' : 'none'}>
          <i aria-hidden="true" style={{ background: STATUS_COLOR[s] }} /> {STATUS_LABEL[s]} <b data-status={s}>{counts[k]}</b>
        </li>
      ))}
      <li className="total">{total.toLocaleString()} nodes</li>
    </ul>
  );
}
