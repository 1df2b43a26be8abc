/**
 * A node's serial console as bootorch keeps it (nodeConsole): a boot attempt's text, live while the
 * newest attempt is shown (what came after the last cursor, asked for every second, across the node's
 * next power-on), searchable (the lines containing a text), and any kept attempt chosen from a list.
 * Consoles can hold secrets: the API refuses viewers unless the option consoleViewers is on, and this
 * page says so.
 */
import { useEffect, useRef, useState } from 'react';
import { useClient } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../gql/index.ts';

const NodeConsoleQuery = graphql(`
  query ConsoleNodeConsole($id: ID!, $attempt: DateTime, $after: String, $search: String) {
    nodeConsole(componentId: $id, attempt: $attempt, after: $after, search: $search) {
      attempt text cursor attempts { attempt bytes first last }
    }
  }
`);

type Attempt = { attempt: string; bytes: number; first: string; last: string };

export function ConsolePage({ id }: { id: string }) {
  const client = useClient();
  const [attempt, setAttempt] = useState<string>(''); // '' = the newest, followed live
  const [search, setSearch] = useState('');
  const [text, setText] = useState('');
  const [shown, setShown] = useState('');
  const [attempts, setAttempts] = useState<Attempt[]>([]);
  const [error, setError] = useState('');
  const [none, setNone] = useState(false);
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    let stop = false;
    let cursor: string | undefined;
    let current = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = async () => {
      const r = await client
        .query(
          NodeConsoleQuery,
          { id, attempt: attempt || undefined, after: cursor, search: search || undefined },
          { requestPolicy: 'network-only' },
        )
        .toPromise();
      if (stop) return;
      if (r.error) {
        setError(r.error.graphQLErrors[0]?.message ?? r.error.message);
        return;
      }
      setError('');
      const c = r.data?.nodeConsole;
      setNone(!c && cursor === undefined);
      if (c) {
        const fresh = cursor === undefined || c.attempt !== current;
        current = String(c.attempt);
        setShown(current);
        setAttempts(c.attempts as Attempt[]);
        setText((t) => (fresh ? c.text : t + c.text));
        cursor = c.cursor;
      }
      // The newest attempt is followed: only what came since is asked for.
      if (!attempt) timer = setTimeout(() => void ask(), 1000);
    };
    setText('');
    void ask();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [client, id, attempt, search]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: scrolls to the end each time the text grows
  useEffect(() => {
    if (!attempt && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text, attempt]);

  return (
    <article className="console-page">
      <p>
        <Link href="/">map</Link> / <Link href={`/node/${id}`}>{id}</Link> / console
      </p>
      <h1>Console of {id}</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Boot attempt{' '}
          <select value={attempt} onChange={(e) => setAttempt(e.target.value)}>
            <option value="">newest (live)</option>
            {attempts.map((a) => (
              <option key={a.attempt} value={a.attempt}>
                {new Date(a.attempt).getTime() === 0 ? 'before any power-on by bootorch' : new Date(a.attempt).toLocaleString()} · {a.bytes}{' '}
                bytes
              </option>
            ))}
          </select>
        </label>{' '}
        <label>
          Search <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="e.g. panic" />
        </label>
      </form>
      {error && (
        <p className="error" role="alert" data-testid="console-error">
          {error}
        </p>
      )}
      {none && !error && <p>No console is kept for this node (consoles are kept for standalone nodes with an IPMI BMC).</p>}
      {shown && (
        <p className="muted">
          Attempt{' '}
          {new Date(shown).getTime() === 0
            ? 'before any power-on by bootorch'
            : `after the power-on of ${new Date(shown).toLocaleString()}`}
          {!attempt && ' · live'}
        </p>
      )}
      {/* A scroll box: focusable, so the keyboard can scroll it (axe scrollable-region-focusable). */}
      <pre
        ref={pre}
        className="console-text"
        data-testid="console-text"
        role="log"
        aria-label={`serial console of ${id}`}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached by keyboard to scroll it
        tabIndex={0}
      >
        {text}
      </pre>
    </article>
  );
}
