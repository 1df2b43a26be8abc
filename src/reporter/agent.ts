/**
 * The node-side reporter (bos-v2-behaviour §5): tells bootorch which boot artifacts this node booted,
 * by the BSS referral token on its kernel command line, through the GraphQL mutation reportBootState.
 * Identity from NODE_IDENTITY or `xname=` in the cmdline file (default /proc/cmdline). Each report
 * is retried until accepted with backoff min(2 x attempt, 30) s (conflicts while bootorch is
 * mid-transition, unknown component, 5xx, network); then it re-reports every 0.75 x
 * bos_update_frequency, the first wait randomised to spread a full-system boot.
 *
 * `reportOnce` is the single call, also used by the simulator's nodes (src/sim/server.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export const REPORT_MUTATION =
  'mutation($id: ID!, $token: String!) { reportBootState(id: $id, bssToken: $token) { __typename ... on ReportRefused { code message } } }';

export class ReportError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ReportError';
  }
}

export interface ReportOptions {
  /** bootorch URL (BOOTORCH_URL); `/graphql` is appended when the path has none. */
  url: string;
  xname: string;
  bssToken: string;
  /** Bearer token (a node token from createNodeToken, or an operator's). */
  authToken?: string;
  /** Default 10 s, the real reporter's read timeout. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /**
   * The HTTP exchange itself, when not `fetch`'s: the simulator's thousands of nodes post through
   * undici's pool directly (fetch's streams and abort signals cost it more than the reports did).
   */
  post?: ReportPost;
}

/** One POST and its answer; rejects on a network failure or the timeout. */
export type ReportPost = (
  url: string,
  request: { headers: Record<string, string>; body: string; timeoutMs: number },
) => Promise<{ status: number; ok: boolean; text: string }>;

/** The default exchange: Node's fetch, the whole request under one timeout. */
function fetchPost(f: typeof fetch): ReportPost {
  return async (url, r) => {
    const res = await f(url, { method: 'POST', headers: r.headers, signal: AbortSignal.timeout(r.timeoutMs), body: r.body });
    return { status: res.status, ok: res.ok, text: await res.text() };
  };
}

export function graphqlUrl(url: string): string {
  const u = new URL(url);
  if (!/\/graphql\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/graphql`;
  return u.toString();
}

/** One report. Resolves when bootorch accepted it; throws ReportError otherwise (all are retryable). */
export async function reportOnce(o: ReportOptions): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (o.authToken) headers.authorization = `Bearer ${o.authToken}`;
  let res: { status: number; ok: boolean };
  let text: string;
  try {
    ({ text, ...res } = await (o.post ?? fetchPost(o.fetch ?? fetch))(graphqlUrl(o.url), {
      headers,
      timeoutMs: o.timeoutMs ?? 10_000,
      body: JSON.stringify({ query: REPORT_MUTATION, variables: { id: o.xname, token: o.bssToken } }),
    }));
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    throw new ReportError(`bootorch unreachable: ${cause ?? (e as Error).message}`);
  }
  let body: {
    data?: { reportBootState?: { __typename?: string; code?: string; message?: string } };
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  try {
    body = JSON.parse(text);
  } catch {
    throw new ReportError(`HTTP ${res.status}: ${text.slice(0, 200)}`, res.status);
  }
  if (body.errors?.length) {
    const e = body.errors[0]!;
    throw new ReportError(`HTTP ${res.status}: ${e.message}`, res.status, e.extensions?.code);
  }
  if (!res.ok) throw new ReportError(`HTTP ${res.status}: ${text.slice(0, 200)}`, res.status);
  const r = body.data?.reportBootState;
  if (r?.__typename === 'ReportRefused') throw new ReportError(`refused (${r.code}): ${r.message}`, res.status, r.code);
  if (!r?.__typename) throw new ReportError('bootorch answered without a reportBootState result', res.status);
}

/** `key=value` tokens of a kernel command line (last one wins, as the real reporter reads them). */
export function parseCmdline(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const tok of text.trim().split(/\s+/)) {
    const i = tok.indexOf('=');
    if (i > 0) out[tok.slice(0, i)] = tok.slice(i + 1);
  }
  return out;
}

/** `4h`, `30m`, `1d`, `2w`, `90s` or plain seconds -> seconds; undefined if unreadable. */
export function durationSeconds(s: string | undefined): number | undefined {
  const m = /^(\d+)([smhdw]?)$/i.exec(s?.trim() ?? '');
  if (!m) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2]!.toLowerCase() as '' | 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

export interface AgentConfig {
  url: string;
  xname: string;
  bssToken: string;
  /** Token string, or a file re-read before every report (rotated node credentials). */
  authToken?: string;
  authTokenFile?: string;
  /** bos_update_frequency in seconds (default 4 h). */
  updateFrequencySeconds: number;
}

/** From the environment (BOOTORCH_URL, BOOTORCH_TOKEN[_FILE], NODE_IDENTITY) and the cmdline file. */
export function agentConfigFromEnv(env: NodeJS.ProcessEnv = process.env, cmdlinePath = env.CMDLINE_FILE ?? '/proc/cmdline'): AgentConfig {
  const cmd = parseCmdline(readFileSync(cmdlinePath, 'utf8'));
  const xname = env.NODE_IDENTITY || cmd.xname;
  const problems: string[] = [];
  if (!env.BOOTORCH_URL) problems.push('BOOTORCH_URL is not set');
  if (!xname) problems.push(`no NODE_IDENTITY and no xname= in ${cmdlinePath}`);
  if (!cmd.bss_referral_token) problems.push(`no bss_referral_token= in ${cmdlinePath}`);
  if (problems.length) throw new Error(`bootorch reporter: ${problems.join('; ')}`);
  return {
    url: env.BOOTORCH_URL!,
    xname: xname!,
    bssToken: cmd.bss_referral_token!,
    authToken: env.BOOTORCH_TOKEN,
    authTokenFile: env.BOOTORCH_TOKEN_FILE,
    updateFrequencySeconds: durationSeconds(cmd.bos_update_frequency) ?? 4 * 3600,
  };
}

export interface AgentDeps {
  /** Milliseconds per "second" of backoff and interval (tests shrink time; default 1000). */
  msPerSecond?: number;
  random?: () => number;
  log?: (msg: string) => void;
  /** Called after each accepted report with the count so far. */
  onReport?: (count: number) => void;
  fetch?: typeof fetch;
}

export interface AgentHandle {
  stop(): void;
  /** Resolves when the loop has stopped. */
  done: Promise<void>;
  /** Accepted reports so far. */
  readonly reports: number;
}

/** Report until stopped: retry each report until accepted, then wait the (jittered) interval. */
export function startReporterAgent(cfg: AgentConfig, deps: AgentDeps = {}): AgentHandle {
  const unit = deps.msPerSecond ?? 1000;
  const random = deps.random ?? Math.random;
  const log = deps.log ?? (() => {});
  const ac = new AbortController();
  let reports = 0;
  const wait = (seconds: number) =>
    new Promise<void>((resolve) => {
      // Stopped already (e.g. from onReport): an abort listener added now would never fire.
      if (ac.signal.aborted) return resolve();
      const t = setTimeout(resolve, seconds * unit);
      ac.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });
  const loop = async () => {
    const interval = 0.75 * cfg.updateFrequencySeconds;
    for (let first = true; !ac.signal.aborted; first = false) {
      for (let attempt = 1; !ac.signal.aborted; attempt++) {
        try {
          const authToken = cfg.authTokenFile ? (await readFile(cfg.authTokenFile, 'utf8')).trim() : cfg.authToken;
          await reportOnce({ url: cfg.url, xname: cfg.xname, bssToken: cfg.bssToken, authToken, fetch: deps.fetch });
          reports++;
          deps.onReport?.(reports);
          break;
        } catch (e) {
          const backoff = Math.min(2 * attempt, 30);
          log(`report for ${cfg.xname} failed (attempt ${attempt}): ${(e as Error).message}; retrying in ${backoff} s`);
          await wait(backoff);
        }
      }
      await wait(first ? interval * random() : interval);
    }
  };
  const done = loop();
  return {
    stop: () => ac.abort(),
    done,
    get reports() {
      return reports;
    },
  };
}
