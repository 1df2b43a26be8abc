/**
 * Sessions, newest first, each running one with its live progress; operators get "New session" and
 * pause / resume / abort (viewers see no buttons they cannot use).
 */
import { useEffect } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { SessionsQuery } from '../queries.ts';
import { canOperate, useIdentity } from '../auth.tsx';
import { FailureGroups, ProgressBar, useSessionProgress } from './SessionProgress.tsx';
import { SessionActions } from './SessionActions.tsx';
import { ResultBadge } from '../ui/badges.tsx';
import { AwaitingApprovalBadge } from './SessionApproval.tsx';

function LiveRow({ name }: { name: string }) {
  const p = useSessionProgress(name);
  return p ? (
    <>
      <ProgressBar p={p} />
      <FailureGroups p={p} />
    </>
  ) : null;
}

export function SessionsPage() {
  const who = useIdentity();
  const [r, refetch] = useQuery({ query: SessionsQuery });
  // New and ended sessions show up without a reload (progress itself is live).
  useEffect(() => {
    const t = setInterval(() => refetch(), 5000);
    return () => clearInterval(t);
  }, [refetch]);
  const sessions = [...(r.data?.sessions ?? [])].reverse();
  return (
    <div className="sessions">
      <h1>
        Sessions{' '}
        {canOperate(who) && (
          <Link className="button" href="/sessions/new">
            New session
          </Link>
        )}
      </h1>
      {r.error && <p className="error">{r.error.message}</p>}
      {!sessions.length && !r.fetching && <p className="muted">No sessions yet.</p>}
      <ul>
        {sessions.map((s) => (
          <li key={s.name} data-testid={`session-${s.name}`}>
            <div className="row">
              <Link href={`/sessions/${s.name}`}>
                <b>{s.name}</b>
              </Link>
              <span>
                {s.operation.toLowerCase()} · {s.templateName}
                {s.limit && ` · ${s.limit}`}
                {s.tenant && ` · tenant ${s.tenant}`}
              </span>
              <ResultBadge result={s.result} title={s.resultText} />
              {s.approval?.waiting && <AwaitingApprovalBadge />}
              {canOperate(who) && s.status.status !== 'COMPLETE' && (
                <SessionActions name={s.name} state={s.status.status} paused={s.paused} onDone={refetch} />
              )}
            </div>
            {s.status.error && <p className="error">{s.status.error}</p>}
            {s.status.status !== 'COMPLETE' && <LiveRow name={s.name} />}
          </li>
        ))}
      </ul>
    </div>
  );
}
