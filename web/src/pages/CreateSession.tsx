/**
 * New session (operators): template, operation and limit, then the dry run (`planSession`, the same
 * planning code session setup runs) is shown, and only "Start" creates the session.
 */
import { useState } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { useLocation } from 'wouter';
import { CreateSessionMutation, PlanQuery, TemplatesQuery } from '../queries.ts';
import type { ConsolePlanQuery, CreateSessionInput, SessionOperation } from '../gql/graphql.ts';
import { PlanView } from '../ui/PlanView.tsx';

export function CreateSession() {
  const client = useClient();
  const [, navigate] = useLocation();
  const [templates] = useQuery({ query: TemplatesQuery });
  const [template, setTemplate] = useState('');
  const [operation, setOperation] = useState<SessionOperation>('REBOOT');
  const [limit, setLimit] = useState('');
  const [name, setName] = useState('');
  const [plan, setPlan] = useState<{ input: CreateSessionInput; result: ConsolePlanQuery['planSession'] } | null>(null);
  const [error, setError] = useState('');
  const [created, create] = useMutation(CreateSessionMutation);
  const chosen = template || templates.data?.sessionTemplates[0]?.name || '';

  const dryRun = async () => {
    setError('');
    setPlan(null);
    const input: CreateSessionInput = { operation, templateName: chosen, limit: limit.trim() || null, name: name.trim() || null };
    const r = await client.query(PlanQuery, { input }).toPromise();
    if (r.error) setError(r.error.message);
    else setPlan({ input, result: r.data!.planSession });
  };
  const start = async () => {
    if (!plan) return;
    const r = await create({ input: plan.input });
    if (r.error) setError(r.error.message);
    else navigate(`/sessions/${r.data!.createSession.session.name}`);
  };
  const p = plan?.result;

  return (
    <div className="create">
      <h1>New session</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void dryRun();
        }}
      >
        <label>
          Template{' '}
          <select
            aria-label="template"
            value={chosen}
            onChange={(e) => {
              setTemplate(e.target.value);
              setPlan(null);
            }}
          >
            {templates.data?.sessionTemplates.map((t) => (
              <option key={`${t.tenant}/${t.name}`} value={t.name}>
                {t.name}
                {t.description ? ` — ${t.description}` : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          Operation{' '}
          <select
            aria-label="operation"
            value={operation}
            onChange={(e) => {
              setOperation(e.target.value as SessionOperation);
              setPlan(null);
            }}
          >
            <option value="REBOOT">reboot</option>
            <option value="BOOT">boot</option>
            <option value="SHUTDOWN">shutdown</option>
            <option value="RESCUE">rescue</option>
            <option value="UNRESCUE">unrescue</option>
          </select>
        </label>
        <label>
          Limit{' '}
          <input
            aria-label="limit"
            value={limit}
            placeholder="compute-a, x1000c0, all,!x1000c0s0b0n0"
            onChange={(e) => {
              setLimit(e.target.value);
              setPlan(null);
            }}
          />
        </label>
        <label>
          Name{' '}
          <input
            aria-label="name"
            value={name}
            placeholder="(a random UUID)"
            onChange={(e) => {
              setName(e.target.value);
              setPlan(null);
            }}
          />
        </label>
        <button type="submit" disabled={!chosen}>
          Dry run
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {p && (
        <section className="plan" data-testid="plan">
          <PlanView p={p} />
          <button type="button" disabled={!p.valid || created.fetching} onClick={() => void start()}>
            Start {operation.toLowerCase()} of {p.counts.managed} nodes
          </button>
        </section>
      )}
    </div>
  );
}
