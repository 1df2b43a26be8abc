/**
 * One session: live progress per phase, failures grouped by reason (each node a link), what its
 * remaining nodes wait for (`explainSession`), and for operators pause / resume / abort.
 */
import { useEffect } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { SessionStatusQuery } from '../queries.ts';
import { canOperate, useIdentity } from '../auth.tsx';
import { FailureGroups, ProgressBar, useSessionProgress } from './SessionProgress.tsx';
import { SessionActions } from './SessionActions.tsx';

export function SessionPage({ name }: { name: string }) {
  const who = useIdentity();
  const live = useSessionProgress(name);
  const [r, refetch] = useQuery({ query: SessionStatusQuery, variables: { name } });
  const p = live ?? r.data?.sessionStatus ?? undefined;
  // What the remaining nodes wait for changes with the progress; re-read it when the progress moves.
  useEffect(() => {
    if (live) refetch();
  }, [live, refetch]);
  if (r.error) return <p className="error">{r.error.message}</p>;
  if (!p) return <p>{r.fetching ? `loading ${name}…` : `No session ${name}.`}</p>;
  const x = r.data?.explainSession;
  return (
    <div className="sessionpage" data-testid="session-page" data-status={p.status}>
      <h2>
        <Link href="/sessions">sessions</Link> / {name} <span className={`state ${p.status.toLowerCase()}`}>{p.status.toLowerCase()}</span>
        {canOperate(who) && p.status !== 'COMPLETE' && <SessionActions name={name} state={p.status} paused={p.paused} onDone={refetch} />}
      </h2>
      <ProgressBar p={p} />
      <h3>Failures by reason</h3>
      {p.failureReasons.length ? <FailureGroups p={p} /> : <p className="muted">none</p>}
      {p.errorSummary.length > 0 && (
        <>
          <h3>Errors</h3>
          <ul>
            {p.errorSummary.map((g) => (
              <li key={g.key}>
                {g.key}: {g.count} ({g.list})
              </li>
            ))}
          </ul>
        </>
      )}
      {x && x.groups.length > 0 && (
        <>
          <h3>Waiting ({x.remaining} nodes)</h3>
          <ul data-testid="wait-groups">
            {x.groups.map((g) => (
              <li key={g.waitingFor}>
                <b>{g.count}</b> {g.description} —{' '}
                {g.examples.map((id, k) => (
                  <span key={id}>
                    {k ? ', ' : ''}
                    <Link href={`/node/${id}`}>{id}</Link>
                  </span>
                ))}
              </li>
            ))}
          </ul>
        </>
      )}
      <p>
        <Link href="/">See it on the map</Link>
      </p>
    </div>
  );
}
