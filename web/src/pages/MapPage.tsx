/**
 * The machine at a glance: the map, a legend with live counts per status, and filters by group (an
 * HSM group or any BOS limit expression, resolved by the API's own dry run), session, status and
 * failure reason. Nodes the filters leave out stay in place, dimmed.
 */
import { useMemo, useState } from 'react';
import { useClient, useQuery } from 'urql';
import { useLocation } from 'wouter';
import { MapCanvas } from '../map/MapCanvas.tsx';
import { STATUSES, STATUS_COLOR, STATUS_LABEL } from '../map/colors.ts';
import type { NodeStore } from '../map/store.ts';
import { useStoreIds, useStoreVersion } from '../live/use-store.ts';
import { PlanQuery, TemplatesQuery } from '../queries.ts';

export function MapPage({ store }: { store: NodeStore }) {
  const ids = useStoreIds(store);
  const version = useStoreVersion(store, 1000);
  const [, navigate] = useLocation();
  const client = useClient();
  const [templates] = useQuery({ query: TemplatesQuery });
  const [session, setSession] = useState('');
  const [status, setStatus] = useState('');
  const [reason, setReason] = useState('');
  const [groupText, setGroupText] = useState('');
  const [group, setGroup] = useState<{ name: string; members: Set<string> } | null>(null);
  const [groupError, setGroupError] = useState('');
  const [hover, setHover] = useState<{ i: number; x: number; y: number } | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the store is mutated in place; version and ids say when it changed
  const { sessions, reasons } = useMemo(
    () => ({
      sessions: [...new Set(store.session.filter(Boolean))].sort(),
      reasons: [...new Set(store.reason.filter(Boolean))].sort(),
    }),
    [store, version, ids],
  );

  const keep = useMemo(() => {
    if (!session && !status && !reason && !group) return null;
    const s = status ? STATUSES.indexOf(status as never) : -1;
    const inGroup = group ? Uint8Array.from(ids, (id) => (group.members.has(id) ? 1 : 0)) : null;
    return (i: number) =>
      (!inGroup || inGroup[i] === 1) &&
      (!session || store.session[i] === session) &&
      (s < 0 || store.status[i] === s) &&
      (!reason || store.reason[i] === reason);
  }, [session, status, reason, group, ids, store]);

  const applyGroup = async () => {
    setGroupError('');
    if (!groupText.trim()) {
      setGroup(null);
      return;
    }
    const list = templates.data ?? (await client.query(TemplatesQuery, {}).toPromise()).data;
    const template = list?.sessionTemplates[0]?.name;
    if (!template) {
      setGroupError('a group is resolved through a template: there is none');
      return;
    }
    const r = await client
      .query(PlanQuery, { input: { operation: 'REBOOT', templateName: template, limit: groupText.trim() } })
      .toPromise();
    if (r.error) {
      setGroupError(r.error.message);
      return;
    }
    const members = new Set(r.data!.planSession.nodes.filter((n) => n.skipReason !== 'EXCLUDED_BY_LIMIT').map((n) => n.id));
    setGroup({ name: groupText.trim(), members });
  };

  const h = hover ? hover.i : null;
  return (
    <div className="mappage">
      <div className="filters">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void applyGroup();
          }}
        >
          <input
            aria-label="group"
            placeholder="group or limit (compute-a, cab-x1000, …)"
            value={groupText}
            onChange={(e) => setGroupText(e.target.value)}
          />
          <button type="submit">Filter</button>
          {group && (
            <span className="chip">
              {group.name}: {group.members.size}
            </span>
          )}
          {groupError && <span className="error">{groupError}</span>}
        </form>
        <select aria-label="session" value={session} onChange={(e) => setSession(e.target.value)}>
          <option value="">all sessions</option>
          {sessions.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <select aria-label="status" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">all statuses</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABEL[s]}
            </option>
          ))}
        </select>
        <select aria-label="failure reason" value={reason} onChange={(e) => setReason(e.target.value)}>
          <option value="">any failure reason</option>
          {reasons.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </div>
      <Legend store={store} total={ids.length} />
      <div className="mapwrap">
        <MapCanvas
          store={store}
          ids={ids}
          keep={keep}
          onHover={(i, x, y) => setHover(i === null ? null : { i, x, y })}
          onOpen={(id) => navigate(`/node/${id}`)}
        />
        {h !== null && hover && (
          <div
            className="tip"
            data-testid="map-tip"
            style={{ left: Math.min(hover.x + 14, window.innerWidth - 240), top: Math.min(hover.y + 14, window.innerHeight - 90) }}
          >
            <b>{store.ids[h]}</b>
            <br />
            {STATUS_LABEL[STATUSES[store.status[h]!]!]}
            {store.phase[h] && store.phase[h] !== 'NONE' ? ` · ${store.phase[h]!.toLowerCase().replace('_', ' ')}` : ''}
            {store.session[h] && (
              <>
                <br />
                session {store.session[h]}
              </>
            )}
            {store.reason[h] && (
              <>
                <br />
                <span className="error">{store.reason[h]}</span>
              </>
            )}
          </div>
        )}
      </div>
    </div>
  );
}

/** Counts per status, re-read every animation frame, in step with the map. */
function Legend({ store, total }: { store: NodeStore; total: number }) {
  useStoreVersion(store, 0);
  const counts = store.counts();
  return (
    <ul className="legend" data-testid="legend">
      {STATUSES.map((s, k) => (
        <li key={s} className={counts[k] ? '' : 'none'}>
          <i style={{ background: STATUS_COLOR[s] }} /> {STATUS_LABEL[s]} <b data-status={s}>{counts[k]}</b>
        </li>
      ))}
      <li className="total">{total.toLocaleString()} nodes</li>
    </ul>
  );
}
