/**
 * One session: its result (the API's, with its words), live progress per phase, the nodes held up by
 * a failing outside service (blocked, with since when: not failures), the failed nodes grouped by
 * reason with "retry them" (a new session of just them, dry run first), nodes between attempts, what
 * its remaining nodes wait for (`explainSession`), a wait for a second admin's approval (SessionApproval),
 * and for operators pause / resume / abort.
 */
import { useEffect, useState } from 'react';
import { useClient, useQuery } from 'urql';
import { Link } from 'wouter';
import { SessionStatusQuery } from '../queries.ts';
import { allIds } from './filters.ts';
import { canOperate, useIdentity } from '../auth.tsx';
import { FailureGroups, ProgressBar, useSessionProgress } from './SessionProgress.tsx';
import { SessionActions } from './SessionActions.tsx';
import { ResultBadge, words } from '../ui/badges.tsx';
import { RunNodesDialog, type RunNodesRequest } from '../ui/RunNodesDialog.tsx';
import { SessionApproval } from './SessionApproval.tsx';
import type { ConsoleProgressFragment } from '../gql/graphql.ts';

const NodeLinks = ({ ids, count }: { ids: string[]; count: number }) => (
  <>
    {ids.map((id, k) => (
      <span key={id}>
        {k ? ', ' : ''}
        <Link href={`/node/${id}`}>{id}</Link>
      </span>
    ))}
    {count > ids.length ? ', …' : ''}
  </>
);

function Blocked({ p }: { p: ConsoleProgressFragment }) {
  if (!p.blocked.length) return null;
  return (
    <section className="blocked" data-testid="blocked" aria-labelledby="blocked-title">
      <h2 id="blocked-title">
        <span aria-hidden="true">◷ </span>Blocked by an outside service or bootorch itself (not failed)
      </h2>
      <ul>
        {p.blocked.map((g) => (
          <li key={`${g.service}/${g.reason}`}>
            <b>
              {g.service === 'BMC'
                ? `BMC not answering (${words(g.reason)})`
                : g.service === 'bootorch'
                  ? `bootorch out of open files or ports (${words(g.reason)})`
                  : `${g.service} failing`}
              {g.since ? ` since ${new Date(g.since).toLocaleTimeString()}` : ''}
            </b>
            : {g.count} nodes wait for it — <NodeLinks ids={g.ids} count={g.count} />
            <br />
            <span className="muted">{g.error}</span>
            <br />
            {g.service === 'BMC'
              ? 'bootorch re-reads their power on each pass; they fail with the cause if it stays unknown past power_unknown_timeout.'
              : g.service === 'bootorch'
                ? "Their BMCs were not asked: raise the worker's open-file limit (LimitNOFILE) or lower BOOTORCH_BMC_KEEP_CONNECTIONS. They fail with the cause if it stays unknown past power_unknown_timeout."
                : `bootorch asks ${g.service} again on each pass and goes on as soon as it answers; check ${g.service}.`}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function SessionPage({ name }: { name: string }) {
  const who = useIdentity();
  const client = useClient();
  const live = useSessionProgress(name);
  const [r, refetch] = useQuery({ query: SessionStatusQuery, variables: { name } });
  const [run, setRun] = useState<RunNodesRequest | null>(null);
  const [error, setError] = useState('');
  const p = live ?? r.data?.sessionStatus ?? undefined;
  // What the remaining nodes wait for changes with the progress; re-read it when the progress moves.
  useEffect(() => {
    if (live) refetch();
  }, [live, refetch]);
  // Setup decides whether a pending session waits for a second admin, and no event says it did: until
  // the session runs or its wait shows, ask again.
  const undecided = p?.status === 'PENDING' && !r.data?.session?.approval;
  useEffect(() => {
    if (!undecided) return;
    const t = setInterval(() => refetch(), 2000);
    return () => clearInterval(t);
  }, [undecided, refetch]);
  if (r.error) return <p className="error">{r.error.message}</p>;
  if (!p) return <p>{r.fetching ? `loading ${name}…` : `No session ${name}.`}</p>;
  const x = r.data?.explainSession;
  const failedCount = p.failureReasons.reduce((n, g) => n + g.count, 0);

  const retryFailed = async () => {
    setError('');
    let ids: string[];
    try {
      ids = await allIds(client, { session: name, status: ['FAILED'] });
    } catch (e) {
      return setError((e as Error).message);
    }
    if (!ids.length) return setError('No failed node of this session is left (a later session may have taken them).');
    setRun({ title: `Retry the ${ids.length} failed nodes of ${name}`, ids, fromSession: name });
  };

  return (
    <div className="sessionpage" data-testid="session-page" data-status={p.status} data-result={p.result}>
      <h1>
        <Link href="/sessions">sessions</Link> / {name} <ResultBadge result={p.result} title={r.data?.session?.resultText} />
        {canOperate(who) && p.status !== 'COMPLETE' && <SessionActions name={name} state={p.status} paused={p.paused} onDone={refetch} />}
      </h1>
      {/* A session that waits for approval is also pending ("waiting for its setup to run"): its approval says more. */}
      {r.data?.session && !r.data.session.approval?.waiting && <p className="muted">{r.data.session.resultText}</p>}
      {r.data?.session?.approval && (
        <SessionApproval name={name} createdBy={r.data.session.createdBy} approval={r.data.session.approval} onDone={refetch} />
      )}
      <ProgressBar p={p} />
      <Blocked p={p} />
      <h2>
        Failures by reason
        {canOperate(who) && failedCount > 0 && (
          <button type="button" onClick={() => void retryFailed()}>
            Retry {failedCount} failed nodes…
          </button>
        )}
      </h2>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {p.failureReasons.length ? <FailureGroups p={p} /> : <p className="muted">none</p>}
      {p.retrying.length > 0 && (
        <>
          <h2>Between attempts (not failed yet)</h2>
          <ul data-testid="retrying">
            {p.retrying.map((g) => (
              <li key={g.key}>
                <b>{g.key}</b>: {g.count} — <NodeLinks ids={g.ids} count={g.count} />
              </li>
            ))}
          </ul>
        </>
      )}
      {p.errorSummary.length > 0 && (
        <>
          <h2>Errors</h2>
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
          <h2>Waiting ({x.remaining} nodes)</h2>
          <ul data-testid="wait-groups">
            {x.groups.map((g) => (
              <li key={`${g.waitingFor}/${g.description}`}>
                <b>{g.count}</b> {g.description} — <NodeLinks ids={g.examples} count={g.count} />
              </li>
            ))}
          </ul>
        </>
      )}
      <p>
        <Link href="/">See it on the map</Link>
      </p>
      {run && <RunNodesDialog request={run} onClose={() => setRun(null)} />}
    </div>
  );
}
