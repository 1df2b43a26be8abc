/**
 * Sign-in: the console holds one bearer token (kept in this tab's sessionStorage) and asks `whoami`
 * who it belongs to; the role decides which buttons are shown. On a local `npm start` (dev auth mode,
 * a loopback client) GET /console/dev-token offers the dev admin token; elsewhere it is a 404.
 */
import { createContext, useContext, useEffect, useState, type FormEvent } from 'react';
import { NoAnswer, apiFetch } from './client.ts';

const KEY = 'bootorch.token';

export interface Identity {
  subject: string;
  role: string;
  tenant?: string | null;
  via: string;
}

export const IdentityContext = createContext<Identity | null>(null);
export const useIdentity = (): Identity => useContext(IdentityContext)!;
/** Operators and admins may start, pause, resume and abort sessions; viewers only look. */
export const canOperate = (who: Identity): boolean => who.role === 'ADMIN' || who.role === 'OPERATOR';
/** Admins may approve a session that waits for a second admin (the API refuses its creator). */
export const canApprove = (who: Identity): boolean => who.role === 'ADMIN';

export const storedToken = (): string | null => sessionStorage.getItem(KEY);
export const storeToken = (t: string | null): void => {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
};

/**
 * Checks a token with whoami over plain fetch (no client exists before sign-in). An API that does not
 * answer, or answers 429 or 5xx, is NoAnswer (ask again); a refusal is an Error with the API's words.
 */
export async function checkToken(token: string): Promise<Identity> {
  const r = await apiFetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ whoami { subject role tenant via } }' }),
  });
  if (r.status === 429 || r.status >= 500) throw new NoAnswer(`bootorch answered HTTP ${r.status}`);
  const body = (await r.json().catch((e: Error) => {
    // The bound ran out while the answer's body was still coming: no answer either.
    throw e.name === 'TimeoutError' ? new NoAnswer('bootorch did not finish its answer in time') : e;
  })) as { data?: { whoami: Identity }; errors?: { message: string }[] };
  if (!body.data?.whoami) throw new Error(body.errors?.[0]?.message ?? `HTTP ${r.status}`);
  if (body.data.whoami.role === 'NODE') throw new Error('a node credential cannot sign in to the console');
  return body.data.whoami;
}

export function SignIn({ onSignedIn, problem }: { onSignedIn: (token: string, who: Identity) => void; problem?: string }) {
  const [token, setToken] = useState('');
  const [devToken, setDevToken] = useState<string | null>(null);
  const [error, setError] = useState(problem ?? '');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    fetch('/console/dev-token')
      .then(async (r) => {
        if (r.ok) setDevToken(((await r.json()) as { token: string }).token);
      })
      .catch(() => {});
  }, []);

  const signIn = async (t: string) => {
    setBusy(true);
    setError('');
    try {
      onSignedIn(t, await checkToken(t.trim()));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void signIn(token.trim());
  };

  return (
    <main className="signin">
      <h1>bootorch</h1>
      <form onSubmit={submit}>
        <label htmlFor="token">API token or OIDC access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          placeholder="bto_…"
        />
        <button type="submit" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
      {devToken && (
        <div className="devtoken">
          <p>This is a local development server: its admin token is offered to this machine only.</p>
          <button type="button" data-testid="use-dev-token" disabled={busy} onClick={() => void signIn(devToken)}>
            Sign in with the dev admin token
          </button>
        </div>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}
