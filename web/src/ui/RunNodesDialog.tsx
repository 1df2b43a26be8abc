/**
 * A new session of just these nodes (retry the failed ones, reboot a selection): its limit is their
 * xnames, its template and operation those of the session they came from unless changed. The dry run
 * (planSession) is shown first; only "Start" creates the session. A modal <dialog>: keyboard focus
 * stays in it, Escape closes it.
 */
import { useEffect, useRef, useState } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { useLocation } from 'wouter';
import { CreateSessionMutation, PlanQuery, SessionOriginQuery, TemplatesQuery } from '../queries.ts';
import type { ConsolePlanQuery, CreateSessionInput, SessionOperation } from '../gql/graphql.ts';
import { PlanView } from './PlanView.tsx';

export interface RunNodesRequest {
  title: string;
  ids: string[];
  /** The session the nodes came from: its template and operation are the defaults. */
  fromSession?: string;
  operation?: SessionOperation;
}

export function RunNodesDialog({ request, onClose }: { request: RunNodesRequest; onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const client = useClient();
  const [, navigate] = useLocation();
  const [templates] = useQuery({ query: TemplatesQuery });
  const [origin] = useQuery({ query: SessionOriginQuery, variables: { name: request.fromSession ?? '' }, pause: !request.fromSession });
  const [template, setTemplate] = useState('');
  const [operation, setOperation] = useState<SessionOperation | ''>(request.operation ?? '');
  const [plan, setPlan] = useState<{ input: CreateSessionInput; result: ConsolePlanQuery['planSession'] } | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [, create] = useMutation(CreateSessionMutation);
  const from = origin.data?.session;
  const chosenTemplate = template || from?.templateName || templates.data?.sessionTemplates[0]?.name || '';
  const chosenOperation: SessionOperation = operation || from?.operation || 'REBOOT';

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);

  const dryRun = async () => {
    setError('');
    setPlan(null);
    setBusy(true);
    const input: CreateSessionInput = { operation: chosenOperation, templateName: chosenTemplate, limit: request.ids.join(',') };
    const r = await client.query(PlanQuery, { input }).toPromise();
    setBusy(false);
    if (r.error) setError(r.error.message);
    else setPlan({ input, result: r.data!.planSession });
  };
  const start = async () => {
    if (!plan) return;
    setBusy(true);
    const r = await create({ input: plan.input });
    setBusy(false);
    if (r.error) setError(r.error.message);
    else {
      onClose();
      navigate(`/sessions/${r.data!.createSession.session.name}`);
    }
  };

  return (
    <dialog ref={ref} className="runnodes" aria-labelledby="runnodes-title" onClose={onClose} data-testid="run-nodes">
      <h2 id="runnodes-title">{request.title}</h2>
      <p>
        A new session of just these {request.ids.length} nodes
        {request.fromSession ? ` (from session ${request.fromSession})` : ''}:{' '}
        <span className="mono">
          {request.ids.slice(0, 8).join(', ')}
          {request.ids.length > 8 ? ', …' : ''}
        </span>
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void dryRun();
        }}
      >
        <label>
          Template{' '}
          <select
            value={chosenTemplate}
            onChange={(e) => {
              setTemplate(e.target.value);
              setPlan(null);
            }}
          >
            {templates.data?.sessionTemplates.map((t) => (
              <option key={`${t.tenant}/${t.name}`} value={t.name}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Operation{' '}
          <select
            value={chosenOperation}
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
        <button type="submit" disabled={busy || !chosenTemplate}>
          Dry run
        </button>
        <button type="button" onClick={() => ref.current?.close()}>
          Cancel
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {plan && (
        <section className="plan" data-testid="plan">
          <PlanView p={plan.result} />
          <button type="button" disabled={busy || !plan.result.valid} onClick={() => void start()}>
            Start {chosenOperation.toLowerCase()} of {plan.result.counts.managed} nodes
          </button>
        </section>
      )}
    </dialog>
  );
}
