/**
 * A session's live progress from the `sessionProgress` subscription (current status at once, then each
 * change): a bar per phase and the failures grouped by reason.
 */
import { useSubscription } from 'urql';
import { Link } from 'wouter';
import { SessionProgressSubscription } from '../queries.ts';
import type { ConsoleProgressFragment } from '../gql/graphql.ts';

export function useSessionProgress(name: string): ConsoleProgressFragment | undefined {
  const [r] = useSubscription({ query: SessionProgressSubscription, variables: { name } });
  return r.data?.sessionProgress;
}

const pct = (n: number) => `${Math.round(n * 100) / 100}%`;

export function ProgressBar({ p }: { p: ConsoleProgressFragment }) {
  const parts: [string, number, string][] = [
    ['succeeded', p.percentSuccessful, '#3fae5a'],
    ['failed', p.percentFailed, '#e03131'],
    ['powering off', p.phases.percentPoweringOff, '#ef8a17'],
    ['powering on', p.phases.percentPoweringOn, '#1c7ed6'],
    ['configuring', p.phases.percentConfiguring, '#9c6ade'],
  ];
  return (
    <div className="progress" data-testid={`progress-${p.name}`} data-complete={p.phases.percentComplete}>
      <div className="bar">
        {parts.map(([k, v, c]) => v > 0 && <span key={k} title={`${k} ${pct(v)}`} style={{ width: `${v}%`, background: c }} />)}
      </div>
      <div className="phases">
        {pct(p.phases.percentComplete)} complete of {p.managedComponentsCount} · {parts.map(([k, v]) => `${k} ${pct(v)}`).join(' · ')} ·{' '}
        {p.timing.duration}
        {p.paused && <b className="paused"> · paused{p.pauseReason ? `: ${p.pauseReason}` : ''}</b>}
      </div>
    </div>
  );
}

export function FailureGroups({ p }: { p: ConsoleProgressFragment }) {
  if (!p.failureReasons.length) return null;
  return (
    <ul className="failures" data-testid="failure-groups">
      {p.failureReasons.map((g) => (
        <li key={g.key}>
          <b>{g.key}</b>: {g.count} —{' '}
          {g.ids.map((id, k) => (
            <span key={id}>
              {k ? ', ' : ''}
              <Link href={`/node/${id}`}>{id}</Link>
            </span>
          ))}
          {g.count > g.ids.length ? ', …' : ''}
        </li>
      ))}
    </ul>
  );
}
