/**
 * A dry run's answer (planSession, the same planning code session setup runs): what the session would
 * do to each node, its errors and warnings; shown before any session is started.
 */
import type { ConsolePlanQuery } from '../gql/graphql.ts';

export function PlanView({ p }: { p: ConsolePlanQuery['planSession'] }) {
  return (
    <>
      <h3>What it would do {p.valid ? '' : '(refused)'}</h3>
      {p.errors.map((m) => (
        <p key={`${m.field}:${m.message}`} className="error">
          {m.field && <b>{m.field}: </b>}
          {m.message}
        </p>
      ))}
      {p.warnings.map((m) => (
        <p key={`${m.field}:${m.message}`} className="warning">
          {m.field && <b>{m.field}: </b>}
          {m.message}
        </p>
      ))}
      {p.setupError && <p className="warning">{p.setupError}</p>}
      <p data-testid="plan-counts">
        {p.counts.managed} nodes: {p.counts.powerCycle} power cycle, {p.counts.powerOn} power on, {p.counts.powerOff} power off,{' '}
        {p.counts.configureOnly} configure only, {p.counts.nothing} nothing, {p.counts.unknown} unknown; {p.counts.skipped} left out.
      </p>
      <ul>
        {p.bootSets.map((b) => (
          <li key={b.name}>
            boot set <b>{b.name}</b>: {b.nodeCount} nodes, <span className="mono">{b.kernel}</span>
            {b.configuration && ` + ${b.configuration}`}
          </li>
        ))}
      </ul>
      <details>
        <summary>per node</summary>
        <table>
          <tbody>
            {p.nodes
              .filter((n) => n.skipReason !== 'EXCLUDED_BY_LIMIT')
              .slice(0, 500)
              .map((n) => (
                <tr key={n.id}>
                  <td className="mono">{n.id}</td>
                  <td>
                    {n.action.toLowerCase().replace(/_/g, ' ')}
                    {n.skipReason && `: ${n.skipReason.toLowerCase().replace(/_/g, ' ')}`}
                  </td>
                  <td>{n.detail}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </>
  );
}
