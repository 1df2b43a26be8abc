/**
 * The console's shell: sign-in gate, then one GraphQL client and one live map store for every page
 * (the map stays current while you read a node or a session). Pages are hash routes (`#/node/x…`),
 * so no server path but `/` belongs to the console.
 */
import { useEffect, useMemo, useState } from 'react';
import { Provider } from 'urql';
import { Link, Route, Router, Switch } from 'wouter';
import { useHashLocation } from 'wouter/use-hash-location';
import { IdentityContext, SignIn, checkToken, storeToken, storedToken, type Identity } from './auth.tsx';
import { NoAnswer, createApiClient, type ApiClient } from './client.ts';
import { NodeStore } from './map/store.ts';
import { prefetchMachineMap, startLiveMap, type LiveStatus } from './live/component-events.ts';
import { mapStats } from './map/stats.ts';
import { MapPage } from './pages/MapPage.tsx';
import { NodePage } from './pages/NodePage.tsx';
import { ConsolePage } from './pages/ConsolePage.tsx';
import { SessionsPage } from './pages/SessionsPage.tsx';
import { SessionPage } from './pages/SessionPage.tsx';
import { CreateSession } from './pages/CreateSession.tsx';
import { canOperate } from './auth.tsx';

function Console({ token, who, signOut }: { token: string; who: Identity; signOut(): void }) {
  mapStats.step('signed in');
  const store = useMemo(() => new NodeStore(), []);
  const [api, setApi] = useState<ApiClient | null>(null);
  const [liveError, setLiveError] = useState('');
  const [live, setLive] = useState<LiveStatus>({ connected: true, staleSince: null });
  // Made and closed by the effect itself: a closed graphql-ws client cannot be reused (StrictMode runs
  // effects twice in development).
  useEffect(() => {
    const a = createApiClient(token);
    setApi(a);
    const map = startLiveMap(a, store, (e) => setLiveError(e.message), token);
    const off = map.onStatus((s) => {
      setLive(s);
      if (s.connected) setLiveError('');
    });
    void map.ready.then(() => setLiveError(''));
    return () => {
      off();
      map.stop();
      a.close();
    };
  }, [token, store]);
  if (!api) return null;

  return (
    <Provider value={api.client}>
      <IdentityContext.Provider value={who}>
        <header>
          <b>bootorch</b>
          <nav>
            <Link href="/">Machine</Link>
            <Link href="/sessions">Sessions</Link>
            {canOperate(who) && <Link href="/sessions/new">New session</Link>}
          </nav>
          <span className="who" data-testid="whoami">
            {who.subject} · {who.role.toLowerCase()}
            {who.tenant ? ` · tenant ${who.tenant}` : ''}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </header>
        <StaleBanner live={live} />
        {liveError && live.connected && (
          <p className="error banner" role="alert">
            {liveError}
          </p>
        )}
        <main>
          <Switch>
            <Route path="/">
              <MapPage store={store} />
            </Route>
            <Route path="/node/:id/console">{(p) => <ConsolePage id={p.id} />}</Route>
            <Route path="/node/:id">{(p) => <NodePage id={p.id} store={store} />}</Route>
            <Route path="/sessions">
              <SessionsPage />
            </Route>
            <Route path="/sessions/new">{canOperate(who) ? <CreateSession /> : <p>Only operators start sessions.</p>}</Route>
            <Route path="/sessions/:name">{(p) => <SessionPage name={p.name} />}</Route>
            <Route>
              <p>
                Nothing here. <Link href="/">The machine</Link>
              </p>
            </Route>
          </Switch>
        </main>
      </IdentityContext.Provider>
    </Provider>
  );
}

/** While the live connection is down: since when, and how old the data on screen is (ticking). */
function StaleBanner({ live }: { live: LiveStatus }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (live.connected) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [live.connected]);
  if (live.connected || live.staleSince === null) return null;
  const age = Math.max(0, Math.round((now - live.staleSince) / 1000));
  return (
    <p className="stale banner" role="alert" data-testid="stale-banner" data-age={age}>
      <span aria-hidden="true">⚠ </span>
      <b>Not live:</b> the connection to bootorch was lost at {new Date(live.staleSince).toLocaleTimeString()}. What you see is{' '}
      <b>{age} s old</b>. Reconnecting; the map catches up from where it stopped.
    </p>
  );
}

export function App() {
  const [auth, setAuth] = useState<{ token: string; who: Identity } | null>(null);
  const [checking, setChecking] = useState(() => !!storedToken());
  const [problem, setProblem] = useState<string>();
  // Why the stored token is not checked yet: the API did not answer (asked again every 2 s, the token kept).
  const [waiting, setWaiting] = useState('');
  useEffect(() => {
    const t = storedToken();
    if (!t) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    prefetchMachineMap(t);
    const attempt = () =>
      checkToken(t).then(
        (who) => {
          setAuth({ token: t, who });
          setChecking(false);
        },
        (e: Error) => {
          if (stopped) return;
          if (e instanceof NoAnswer) {
            setWaiting(e.message);
            timer = setTimeout(attempt, 2000);
            return;
          }
          storeToken(null);
          setProblem(e.message);
          setChecking(false);
        },
      );
    void attempt();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  if (checking) return <p role="status">checking the stored token…{waiting && ` ${waiting}: asking again.`}</p>;
  return (
    <Router hook={useHashLocation}>
      {auth ? (
        <Console
          token={auth.token}
          who={auth.who}
          signOut={() => {
            storeToken(null);
            setAuth(null);
          }}
        />
      ) : (
        <SignIn
          problem={problem}
          onSignedIn={(token, who) => {
            storeToken(token);
            setAuth({ token, who });
          }}
        />
      )}
    </Router>
  );
}
