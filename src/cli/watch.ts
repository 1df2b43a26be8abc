/**
 * `session watch` and `session create --watch`: two subscriptions on one WebSocket, the session's
 * component events in batches (componentEventBatches: a few messages a second however large the
 * session; from its first event, so nothing that happened before the watch began is missed) and its
 * progress (ends with the final snapshot). A lost connection is resumed from the
 * last event's cursor, a few times. After the final snapshot the rest of the log is read with the
 * componentEvents query, so a --json stream holds every event. Exit code 1 when the session ended
 * with failed nodes or a setup error.
 */
import { type ApiClient, CliError, EXIT_FAILED, EXIT_UNREACHABLE } from './client.ts';
import { counts, HumanDisplay, JsonDisplay, type Display, type Progress, type Summary, type WatchEvent } from './watch-display.ts';

const EVENT_FIELDS = 'cursor at componentId kind actor fromPhase toPhase fromStatus toStatus action error reason';
const EVENTS = `subscription($f: ComponentEventFilter, $after: ID) { componentEventBatches(filter: $f, after: $after) { cursor events { ${EVENT_FIELDS} } } }`;
const EVENTS_PAGE = `query($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after, first: 1000) { ${EVENT_FIELDS} } }`;
const GROUP = 'key count ids list';
const PROGRESS = `subscription($n: String!) { sessionProgress(name: $n) {
  name status managedComponentsCount percentSuccessful percentFailed percentStaged
  phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring percentDeploying }
  errorSummary { ${GROUP} } failureReasons { ${GROUP} } timing { startTime endTime duration } paused pauseReason } }`;
const SESSION = `query($n: String!) { session(name: $n) { name status { status startTime error } } }`;

export interface WatchIO {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  json: boolean;
  /** Show a live bar (default: when `out` is a terminal). */
  tty?: boolean;
  /** Reconnect attempts after a lost connection (default 5). */
  retries?: number;
}

/** Watch until the session completes; returns the exit code. */
export async function watchSession(api: ApiClient, name: string, io: WatchIO): Promise<number> {
  const session = (await api.request<{ session: { status: { startTime: string } } | null }>(SESSION, { n: name })).session;
  if (!session) throw new CliError(`no session "${name}"${api.endpoint.tenant ? ` for tenant "${api.endpoint.tenant}"` : ''}`);
  // A session of the same name deleted earlier left its events in the log; they are not this one's.
  // (A minute of slack: the start time is the API's clock, `at` the database's.)
  const since = new Date(session.status.startTime).getTime() - 60_000;
  const display: Display = io.json ? new JsonDisplay(io.out) : new HumanDisplay(name, io.out, io.tty ?? Boolean(io.out.isTTY));
  // Human output shows failures; JSON shows every event.
  const filter = io.json ? { session: name } : { session: name, kinds: ['failed'] };
  let cursor = '0';
  const onEvent = (e: WatchEvent) => {
    cursor = e.cursor;
    if (new Date(e.at).getTime() >= since) display.event(e);
  };
  let final: Progress | undefined;
  const retries = io.retries ?? 5;
  for (let attempt = 0; !final; attempt++) {
    try {
      const events = api.subscribe<{ componentEventBatches: { events: WatchEvent[] } }>(EVENTS, { f: filter, after: cursor }, (d) => {
        for (const e of d.componentEventBatches.events) onEvent(e);
      });
      const progress = api.subscribe<{ sessionProgress: Progress }>(PROGRESS, { n: name }, (d) => {
        attempt = 0;
        display.progress(d.sessionProgress);
        if (d.sessionProgress.status === 'COMPLETE') final = d.sessionProgress;
      });
      // The events stream never ends by itself; a failure of it surfaces here too. (Both streams
      // fail together when the connection drops: the second rejection is expected, not unhandled.)
      events.done.catch(() => {});
      progress.done.catch(() => {});
      await Promise.race([progress.done, events.done]);
      events.stop();
      progress.stop();
      if (!final) throw new CliError(`session ${name} was deleted while watching`);
    } catch (e) {
      if (!(e instanceof CliError) || e.exitCode !== EXIT_UNREACHABLE || attempt >= retries) throw e;
      display.note(`connection lost (${e.message}); reconnecting`);
      await api.reset();
      await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 5000)));
    }
  }
  await api.reset();
  // Events the stream had not delivered when the final status came: read them from the log.
  for (;;) {
    const page = (await api.request<{ componentEvents: WatchEvent[] }>(EVENTS_PAGE, { f: filter, after: cursor })).componentEvents;
    for (const e of page) onEvent(e);
    if (page.length < 1000) break;
  }
  const s = (await api.request<{ session: { status: { error: string | null } } | null }>(SESSION, { n: name })).session;
  const c = counts(final);
  const summary: Summary = {
    session: name,
    error: s?.status.error ?? null,
    succeeded: c.succeeded,
    failed: c.failed,
    staged: c.staged,
    total: c.total,
    duration: final.timing.duration,
    failureReasons: final.failureReasons,
    errorSummary: final.errorSummary,
  };
  display.summary(summary);
  return summary.failed > 0 || summary.error ? EXIT_FAILED : 0;
}
