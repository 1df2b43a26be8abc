/**
 * One node: where it stands (phase, status, session, artifacts), why it failed, `explain` in words
 * (what it waits for, what the status operator would decide, what acts next, what blocks it, the last
 * lines of its console) and its timeline. Re-read when a live event for this node arrives.
 */
import { useEffect, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { EnableNodesMutation, NodeQuery, ReleaseQuarantineMutation, ResumeMutation, TimelineQuery } from '../queries.ts';
import type { NodeStore } from '../map/store.ts';
import { mapStatus, STATUS_COLOR, STATUS_LABEL, type Status } from '../map/colors.ts';
import { words } from '../ui/badges.tsx';
import { canOperate, useIdentity } from '../auth.tsx';
import { RunNodesDialog, type RunNodesRequest } from '../ui/RunNodesDialog.tsx';
import { HardwareCard } from '../ui/HardwareCard.tsx';
import { ConsoleTail } from '../ui/ConsoleTail.tsx';
import type { SuggestedAction } from '../gql/graphql.ts';

/** The button that does what explain's advice says (operators only). */
function NextAction({ id, action, session, onDone }: { id: string; action: SuggestedAction; session: string; onDone(): void }) {
  const who = useIdentity();
  const [run, setRun] = useState<RunNodesRequest | null>(null);
  const [enabled, enable] = useMutation(EnableNodesMutation);
  const [resumed, resume] = useMutation(ResumeMutation);
  const [note, setNote] = useState('');
  if (!canOperate(who) || action === 'NONE') return null;
  const done = (e?: { message: string }) => {
    setNote(e ? e.message : 'done');
    onDone();
  };
  return (
    <p className="nextaction">
      {action === 'RETRY' && (
        <button type="button" onClick={() => setRun({ title: `Retry ${id}`, ids: [id], fromSession: session || undefined })}>
          Retry this node…
        </button>
      )}
      {action === 'ENABLE' && (
        <button type="button" disabled={enabled.fetching} onClick={() => void enable({ ids: [id] }).then((r) => done(r.error))}>
          Clear failure and enable
        </button>
      )}
      {action === 'RESUME_SESSION' && (
        <button type="button" disabled={resumed.fetching} onClick={() => void resume({ name: session }).then((r) => done(r.error))}>
          Resume session {session}
        </button>
      )}
      {note && <span role="status"> {note}</span>}
      {run && <RunNodesDialog request={run} onClose={() => setRun(null)} />}
    </p>
  );
}

/** Rescue the node into its rescue image, or bring a rescued one back (docs/rescue.md; operators only). */
function RescueAction({ id, rescued }: { id: string; rescued: boolean }) {
  const who = useIdentity();
  const [run, setRun] = useState<RunNodesRequest | null>(null);
  if (!canOperate(who)) return null;
  const operation = rescued ? 'UNRESCUE' : 'RESCUE';
  const title = rescued ? `Unrescue ${id}` : `Rescue ${id}`;
  return (
    <p className="nextaction">
      <button type="button" data-testid="rescue-action" onClick={() => setRun({ title, ids: [id], operation })}>
        {rescued ? 'Unrescue: boot its desired state…' : 'Rescue: boot its rescue image…'}
      </button>
      {run && <RunNodesDialog request={run} onClose={() => setRun(null)} />}
    </p>
  );
}

/** A quarantined node: why, and the release button (operators only). */
function QuarantineNote({ id, summary, onDone }: { id: string; summary: string; onDone(): void }) {
  const who = useIdentity();
  const [released, release] = useMutation(ReleaseQuarantineMutation);
  const [note, setNote] = useState('');
  return (
    <div className="error" data-testid="quarantine">
      <p>
        <b>Quarantined:</b> {summary}
      </p>
      {canOperate(who) && (
        <p className="nextaction">
          <button
            type="button"
            disabled={released.fetching}
            onClick={() =>
              void release({ ids: [id] }).then((r) => {
                setNote(r.error ? r.error.message : 'released');
                onDone();
              })
            }
          >
            Release from quarantine
          </button>
          {note && <span role="status"> {note}</span>}
        </p>
      )}
    </div>
  );
}

export function NodePage({ id, store }: { id: string; store: NodeStore }) {
  const [node, refetchNode] = useQuery({ query: NodeQuery, variables: { id } });
  const [timeline, refetchTimeline] = useQuery({ query: TimelineQuery, variables: { id } });

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return store.subscribe((changed) => {
      const i = store.index.get(id);
      if (changed !== 'all' && (i === undefined || !changed.includes(i))) return;
      timer ??= setTimeout(() => {
        timer = undefined;
        refetchNode();
        refetchTimeline();
      }, 300);
    });
  }, [store, id, refetchNode, refetchTimeline]);

  if (node.error) return <p className="error">{node.error.message}</p>;
  const c = node.data?.component;
  const x = node.data?.explain;
  if (node.fetching && !c) return <p>loading {id}…</p>;
  if (!c)
    return (
      <p>
        No component {id} (or not your tenant's). <Link href="/">Back to the map</Link>
      </p>
    );
  const status = mapStatus(c.status.status, c.status.phase) as Status;

  return (
    <div className="nodepage" data-testid="node-page">
      <h1>
        <Link href="/">map</Link> / {c.id}{' '}
        <small>
          <Link href={`/node/${c.id}/console`}>console</Link>
        </small>
      </h1>
      <div className="cards">
        <section>
          <h2>State</h2>
          <p className="status">
            <i aria-hidden="true" style={{ background: STATUS_COLOR[status] }} />{' '}
            <b data-testid="node-status">{STATUS_LABEL[status] ?? words(status)}</b>
            {c.status.phase !== 'NONE' && <> · phase {words(c.status.phase)}</>} · {c.enabled ? 'enabled' : 'disabled'}
          </p>
          {c.failureReason && (
            <p className="failure" data-testid="failure-reason">
              Failed: <b>{c.failureReason}</b>
              {c.error && <> — {c.error}</>}
            </p>
          )}
          {!c.failureReason && c.error && <p className="error">Last error: {c.error}</p>}
          {c.powerDrift && (
            <p className="error" data-testid="power-drift">
              Power drift: <b>{c.powerDrift.actual}</b>, but bootorch left it {c.powerDrift.expected} (since{' '}
              {new Date(c.powerDrift.since).toLocaleString()}); nothing is done about it.
            </p>
          )}
          <dl>
            <dt>session</dt>
            <dd>{c.session ? <Link href={`/sessions/${c.session}`}>{c.session}</Link> : '—'}</dd>
            <dt>last action</dt>
            <dd>
              {words(c.lastAction.action) || '—'}
              {c.lastAction.failed ? ' (failed)' : ''}
            </dd>
            <dt>attempts</dt>
            <dd>
              power on {c.eventStats.powerOnAttempts}, graceful off {c.eventStats.powerOffGracefulAttempts}, forced off{' '}
              {c.eventStats.powerOffForcefulAttempts}
            </dd>
            <dt>desired</dt>
            <dd className="mono">
              {c.desiredState.bootArtifacts.kernel || '—'}
              {c.desiredState.configuration && ` + ${c.desiredState.configuration}`}
            </dd>
            <dt>booted</dt>
            <dd className="mono">{c.actualState.bootArtifacts.kernel || '—'}</dd>
            {c.rescue && (
              <>
                <dt>rescued</dt>
                <dd className="mono" data-testid="rescued">
                  {c.rescue.kernel} (its desired state is kept for the unrescue)
                </dd>
              </>
            )}
          </dl>
          <RescueAction id={c.id} rescued={!!c.rescue} />
        </section>
        {x && (
          <section data-testid="explain">
            <h2>Explain</h2>
            <p className="summary">{x.summary}</p>
            {x.quarantine && (
              <QuarantineNote
                id={c.id}
                summary={x.quarantine.summary}
                onDone={() => {
                  refetchNode();
                  refetchTimeline();
                }}
              />
            )}
            <div className="next" data-testid="next-step" data-action={x.suggestedAction}>
              <p>
                <b>Next:</b> {x.next}
                {x.nextAt && <span className="muted"> (at {new Date(x.nextAt).toLocaleTimeString()})</span>}
              </p>
              {x.advice && (
                <p data-testid="advice">
                  <b>What to do:</b> {x.advice}
                </p>
              )}
              <NextAction
                id={c.id}
                action={x.suggestedAction}
                session={c.session}
                onDone={() => {
                  refetchNode();
                  refetchTimeline();
                }}
              />
            </div>
            <dl>
              <dt>waits for</dt>
              <dd>{words(x.waitingFor)}</dd>
              <dt>acts next</dt>
              <dd>{x.nextOperator ?? 'nobody'}</dd>
              {x.decision && (
                <>
                  <dt>status decision</dt>
                  <dd>
                    {x.decision.why}{' '}
                    <span className="muted">
                      ({x.decision.rule} → {words(x.decision.phase)})
                    </span>
                  </dd>
                </>
              )}
              <dt>power (PCS)</dt>
              <dd>{x.powerState ?? 'no answer'}</dd>
              <dt>configuration</dt>
              <dd>
                {x.cfsDesiredConfig || '—'} {x.cfsStatus && `(${x.cfsStatus})`}
              </dd>
              {x.sessionPaused && (
                <>
                  <dt>paused</dt>
                  <dd>{x.sessionPauseReason ?? 'yes'}</dd>
                </>
              )}
            </dl>
            <ConsoleTail id={c.id} lines={x.consoleTail} />
            {x.blockers.length > 0 && (
              <ul className="blockers">
                {x.blockers.map((b) => (
                  <li key={b.kind}>
                    <b>{words(b.kind)}</b>: {b.detail}
                  </li>
                ))}
              </ul>
            )}
            <details>
              <summary>each operator's criteria for this node</summary>
              <table>
                <tbody>
                  {x.criteria.map((k, n) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: one explain answer's rows, in a fixed order
                    <tr key={n} className={k.met ? 'met' : 'unmet'}>
                      <td>{k.operator}</td>
                      <td>{k.criterion}</td>
                      <td>{k.met ? '✓' : '✗'}</td>
                      <td>{k.detail}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          </section>
        )}
        <HardwareCard id={c.id} />
      </div>
      <section>
        <h2>Timeline</h2>
        {timeline.error && <p className="error">{timeline.error.message}</p>}
        <table className="timeline" data-testid="timeline">
          <tbody>
            {(timeline.data?.componentTimeline.events ?? [])
              .slice()
              .reverse()
              .map((e) => (
                <tr key={e.cursor}>
                  <td className="mono">{new Date(e.at).toLocaleTimeString()}</td>
                  <td>{e.kind}</td>
                  <td>
                    {e.fromStatus || e.toStatus ? `${words(e.fromStatus)} → ${words(e.toStatus)}` : ''}
                    {e.action ? ` ${words(e.action)}` : ''}
                  </td>
                  <td className={e.reason || e.error ? 'error' : ''}>
                    {e.reason}
                    {e.reason && e.error ? ': ' : ''}
                    {e.error}
                  </td>
                  <td className="muted">
                    {e.actor}
                    {e.session && ` · ${e.session}`}
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}
