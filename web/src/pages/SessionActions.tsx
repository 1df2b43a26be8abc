/** Pause, resume and abort, for operators (callers check canOperate before rendering these). */
import { useMutation } from 'urql';
import { AbortMutation, PauseMutation, ResumeMutation } from '../queries.ts';

export function SessionActions({ name, paused, onDone }: { name: string; paused: boolean; onDone(): void }) {
  const [pause, doPause] = useMutation(PauseMutation);
  const [resume, doResume] = useMutation(ResumeMutation);
  const [abort, doAbort] = useMutation(AbortMutation);
  const busy = pause.fetching || resume.fetching || abort.fetching;
  const error = pause.error ?? resume.error ?? abort.error;
  const run = async (p: Promise<unknown>) => { await p; onDone(); };
  return (
    <span className="actions">
      {paused
        ? <button type="button" disabled={busy} onClick={() => void run(doResume({ name }))}>Resume</button>
        : <button type="button" disabled={busy} onClick={() => void run(doPause({ name }))}>Pause</button>}
      <button type="button" className="danger" disabled={busy}
        onClick={() => { if (window.confirm(`Abort session ${name}? Its nodes stay where they are and are disabled.`)) void run(doAbort({ name })); }}>Abort</button>
      {error && <span className="error">{error.message}</span>}
    </span>
  );
}
