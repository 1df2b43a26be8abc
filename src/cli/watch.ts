/**
 * `session watch` and `session create --watch`: two subscriptions on one WebSocket, the session's
 * component events in batches (componentEventBatches: a few messages a second however large the
 * session; from its first event, so nothing that happened before the watch began is missed) and its
 * progress (ends with the final snapshot). After the final snapshot the rest of the log is read with
 * the componentEvents query, so a --json stream holds every event.
 * The watch rides out an API restart, a failover and a proxy's 502/503: every transient failure
 * (client.ts CliError.transient) is retried with backoff, the events resumed from the last cursor,
 * until the API has failed for `retryForMs` in a row. Exit code: 0 when the session completed with
 * no failed node, 1 with failed nodes, a setup error or an abort (docs/cli.md).
 */
import { type ApiClient, CliError, EXIT_FAILED } from './client.ts';
import { counts, HumanDisplay, JsonDisplay, type Display, type Progress, type Summary, type WatchEvent } from './watch-display.ts';

const EVENT_FIELDS = 'cursor at componentId kind actor fromPhase toPhase fromStatus toStatus action error reason';
const EVENTS = `subscription($f: ComponentEventFilter, $after: ID) { componentEventBatches(filter: $f, after: $after) { cursor events { ${EVENT_FIELDS} } } }`;
const EVENTS_PAGE = `query($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after, first: 1000) { ${EVENT_FIELDS} } }`;
const GROUP = 'key count ids list';
const PROGRESS = `subscription($n: String!) { sessionProgress(name: $n) {
  name status managedComponentsCount percentSuccessful percentFailed percentStaged
  phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring percentDeploying }
  errorSummary { ${GROUP} } failureReasons { ${GROUP} } blocked { service reason since count ids error }
  timing { startTime endTime duration } paused pauseReason } }`;
const SESSION = `query($n: String!) { session(name: $n) { name aborted status { status startTime error } } }`;

export interface WatchIO {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  json: boolean;
  /** Show a live bar (default: when `out` is a terminal). */
  tty?: boolean;
  /** How long the API may fail in a row before the watch gives up (default 10 minutes). */
  retryForMs?: number;
  /**
   * The API just answered (the session was created through it): retry the first read too. Else a
   * first read that fails ends the watch at once: a wrong URL is not an outage to wait out.
   */
  apiAnswered?: boolean;
}

const RETRY_FOR_MS = 10 * 60_000;
const BACKOFF_MS = [250, 500, 1000, 2000, 5000];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries of transient failures: the wait before the next try, or the error to give up with. */
class Patience {
  private since: number | null = null;
  private tries = 0;
  constructor(
    private readonly forMs: number,
    private readonly display: Display,
  ) {}
  ok(): void {
    this.since = null;
    this.tries = 0;
  }
  /** Waits (backoff, or the API's Retry-After) when `e` is transient and time is left; else throws it. */
  async after(e: unknown): Promise<void> {
    if (!(e instanceof CliError) || !e.transient) throw e;
    this.since ??= Date.now();
    if (Date.now() - this.since > this.forMs) throw e;
    const backoff = BACKOFF_MS[Math.min(this.tries++, BACKOFF_MS.length - 1)]!;
    const wait = Math.min(Math.max(backoff, (e.transient.retryAfterSeconds ?? 0) * 1000), 30_000);
    this.display.note(`${e.message}; retrying in ${(wait / 1000).toFixed(wait < 1000 ? 2 : 0)} s`);
    await sleep(wait);
  }
  /** `fn` until it succeeds or a failure is not worth another try. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const r = await fn();
        this.ok();
        return r;
      } catch (e) {
        await this.after(e);
      }
    }
  }
}

interface SessionInfo {
  session: { status: { startTime: string; error: string | null }; aborted: boolean } | null;
}

/** Watch until the session completes; returns the exit code. */
export async function watchSession(api: ApiClient, name: string, io: WatchIO): Promise<number> {
  const display: Display = io.json ? new JsonDisplay(io.out) : new HumanDisplay(name, io.out, io.tty ?? Boolean(io.out.isTTY));
  const patience = new Patience(io.retryForMs ?? RETRY_FOR_MS, display);
  const first = () => api.request<SessionInfo>(SESSION, { n: name });
  const session = (await (io.apiAnswered ? patience.run(first) : first())).session;
  if (!session) throw new CliError(`no session "${name}"${api.endpoint.tenant ? ` for tenant "${api.endpoint.tenant}"` : ''}`);
  // A session of the same name deleted earlier left its events in the log; they are not this one's.
  // (A minute of slack: the start time is the API's clock, `at` the database's.)
  const since = new Date(session.status.startTime).getTime() - 60_000;
  // Human output shows failures; JSON shows every event.
  const filter = io.json ? { session: name } : { session: name, kinds: ['failed'] };
  let cursor = '0';
  const onEvent = (e: WatchEvent) => {
    cursor = e.cursor;
    if (new Date(e.at).getTime() >= since) display.event(e);
  };
  let final: Progress | undefined;
  while (!final) {
    try {
      const events = api.subscribe<{ componentEventBatches: { events: WatchEvent[] } }>(EVENTS, { f: filter, after: cursor }, (d) => {
        for (const e of d.componentEventBatches.events) onEvent(e);
      });
      const progress = api.subscribe<{ sessionProgress: Progress }>(PROGRESS, { n: name }, (d) => {
        patience.ok();
        display.progress(d.sessionProgress);
        if (d.sessionProgress.status === 'COMPLETE') final = d.sessionProgress;
      });
      // The events stream never ends by itself; a failure of it surfaces here too. (Both streams
      // fail together when the connection drops: the second rejection is expected, not unhandled.)
      events.done.catch(() => {});
      progress.done.catch(() => {});
      try {
        await Promise.race([progress.done, events.done]);
      } finally {
        events.stop();
        progress.stop();
      }
      if (!final) throw new CliError(`session ${name} was deleted while watching`);
    } catch (e) {
      if (final) break;
      await api.reset();
      await patience.after(e);
    }
  }
  await api.reset();
  // Events the stream had not delivered when the final status came: read them from the log.
  for (;;) {
    const page = (await patience.run(() => api.request<{ componentEvents: WatchEvent[] }>(EVENTS_PAGE, { f: filter, after: cursor })))
      .componentEvents;
    for (const e of page) onEvent(e);
    if (page.length < 1000) break;
  }
  const s = (await patience.run(() => api.request<SessionInfo>(SESSION, { n: name }))).session;
  const c = counts(final);
  const summary: Summary = {
    session: name,
    error: s?.status.error ?? (s?.aborted ? 'aborted' : null),
    succeeded: c.succeeded,
    failed: c.failed,
    staged: c.staged,
    total: c.total,
    duration: final.timing.duration,
    failureReasons: final.failureReasons,
    errorSummary: final.errorSummary,
  };
  display.summary(summary);
  return summary.failed > 0 || summary.error || s?.aborted ? EXIT_FAILED : 0;
}
