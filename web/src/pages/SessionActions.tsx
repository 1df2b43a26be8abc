/**
 * Pause, resume and abort, for operators (callers check canOperate before rendering these). The
 * mutation's answer decides which of Pause / Resume shows until the caller's `paused` (from a
 * subscription or a query, which may come later) changes.
 */
import { useEffect, useState } from 'react';
import { useMutation } from 'urql';
import { AbortMutation, PauseMutation, ResumeMutation } from '../queries.ts';

export function SessionActions({ name, state, paused, onDone }: { name: string; state: string; paused: boolean; onDone(): void }) {
  const [pause, doPause] = useMutation(PauseMutation);
  const [resume, doResume] = useMutation(ResumeMutation);
  const [abort, doAbort] = useMutation(AbortMutation);
  const [answered, setAnswered] = useState<boolean | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new paused flag from the server replaces the mutation's answer
  useEffect(() => setAnswered(null), [paused]);
  const isPaused = answered ?? paused;
  const busy = pause.fetching || resume.fetching || abort.fetching;
  const error = pause.error ?? resume.error ?? abort.error;
  /** `pausedNow` reads the answer: the session's paused flag, when the mutation says. */
  const run = async <T,>(p: Promise<{ data?: T }>, pausedNow: (d: T) => boolean | undefined = () => undefined) => {
    const r = await p;
    const now = r.data ? pausedNow(r.data) : undefined;
    if (now !== undefined) setAnswered(now);
    onDone();
  };
  return (
    <span className="actions">
      {/* Only a running session pauses (a pending one has no nodes yet; the API leaves it as it is). */}
      {state !== 'RUNNING' ? null : isPaused ? (
        <button type="button" disabled={busy} onClick={() => void run(doResume({ name }), (d) => d.resumeSession.paused)}>
          Resume
        </button>
      ) : (
        <button type="button" disabled={busy} onClick={() => void run(doPause({ name }), (d) => d.pauseSession.paused)}>
          Pause
        </button>
      )}
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          if (window.confirm(`Abort session ${name}? Its nodes stay where they are and are disabled.`)) void run(doAbort({ name }));
        }}
      >
        Abort
      </button>
      {error && <span className="error">{error.message}</span>}
    </span>
  );
}
