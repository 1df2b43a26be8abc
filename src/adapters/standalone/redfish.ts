/**
 * Power over Redfish (DMTF DSP0266): GET the ComputerSystem for `PowerState`, PATCH
 * `Boot.BootSourceOverrideTarget: Pxe` (once) before powering on, POST the system's
 * `#ComputerSystem.Reset` target (remembered from its last read) with `On`, `GracefulShutdown` or
 * `ForceOff`. HTTP basic auth; the node's BMC address is its ComputerSystem URL; certificates checked
 * against BOOTORCH_BMC_CA_FILE when given. Answers are checked with zod; failures classified.
 */
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import type { PowerOperation } from '../ports.ts';
import { BmcError, bmcError, localFailure, type BmcDriver, type BmcTarget } from './bmc.ts';
import { markBusy } from './bmc-guard.ts';
import { BmcConnections } from './connections.ts';

export interface RedfishOptions {
  /** Deadline of one request in ms (default 15000). */
  timeoutMs?: number;
  /** PEM CA bundle BMC certificates are checked against (BMCs mostly present self-signed ones). */
  caFile?: string;
  /**
   * How long a BMC's idle connection is kept, ms (default REDFISH_KEEP_ALIVE_MS, 60 s). A reboot
   * calls each BMC once a phase, and its phases come more than undici's default 4 s apart: without
   * this nearly every call opens a new connection (and, over HTTPS, a new TLS session). A BMC that
   * announces a shorter keep-alive (`Keep-Alive: timeout=N`) is held to N less 2 s.
   */
  keepAliveMs?: number;
  /**
   * Idle connections kept at most, over every BMC (default: half the open-file limit, connections.ts;
   * BOOTORCH_BMC_KEEP_CONNECTIONS). Past it a call's connection is closed when the call ends.
   */
  keepConnections?: number;
}

/** The default of RedfishOptions.keepAliveMs. */
export const REDFISH_KEEP_ALIVE_MS = 60_000;

/** Errors of a connection that closed under a request before its answer was whole. */
const CLOSED_UNDER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
/**
 * Calls sent again, once, when the BMC closed a kept connection under them: reading the system and
 * setting the boot override to the same value change nothing if done twice. A POST Reset is never
 * sent twice by the client (the BMC may have acted on it); its failure is `unreachable`, and the next
 * reconcile reads the node's power before asking again.
 */
const RESENDABLE = new Set(['GET', 'PATCH']);

const RESET: Record<PowerOperation, string> = { On: 'On', 'Soft-Off': 'GracefulShutdown', 'Force-Off': 'ForceOff' };

const system = z
  .object({
    PowerState: z.enum(['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused']).nullish(),
    Actions: z
      .object({
        '#ComputerSystem.Reset': z.object({ target: z.string() }).passthrough(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

export class RedfishClient implements BmcDriver {
  private readonly connections: BmcConnections;
  /**
   * Where each system's Reset action is (by the system's address), from the last read of the system.
   * Kept for the process's life, as a BMC moves it only with its firmware: a power call is then one
   * POST, not a GET and a POST. A 404 or 405 from a remembered target forgets it (power()).
   */
  private readonly resetTargets = new Map<string, string>();

  constructor(private readonly o: RedfishOptions = {}) {
    this.connections = new BmcConnections({
      keep: o.keepConnections,
      keepAliveMs: o.keepAliveMs ?? REDFISH_KEEP_ALIVE_MS,
      // Read once at start: a missing CA file is a deployment error to report at once, not per call.
      ...(o.caFile ? { connect: { ca: readFileSync(o.caFile, 'utf8') } } : {}),
    });
  }

  /**
   * Resolves when the client next sees one of its BMC connections close. For tests: a call made after
   * that goes out on a new connection, where one made as soon as the BMC closed its end may not.
   */
  nextDisconnect(): Promise<void> {
    return this.connections.nextDisconnect();
  }

  /** The connections to BMCs: clients, open sockets, and how many may be kept idle. */
  connectionStats(): { clients: number; connected: number; keep: number } {
    return this.connections.stats();
  }

  /** Close the BMCs' connections (idle ones do not keep the process alive; this is for a clean stop). */
  close(): Promise<void> {
    return this.connections.close();
  }

  async powerState(t: BmcTarget): Promise<'on' | 'off'> {
    const s = await this.system(t);
    // A system on its way down still draws power: PCS, too, reads PoweringOff as on.
    return s.PowerState === 'Off' ? 'off' : s.PowerState ? 'on' : this.missing(t);
  }

  async power(t: BmcTarget, op: PowerOperation): Promise<void> {
    if (op === 'On') {
      await this.request(t, 'PATCH Boot', t.address, 'PATCH', {
        Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' },
      });
    }
    const known = this.resetTargets.get(t.address);
    if (known) {
      try {
        return await this.reset(t, known, RESET[op]);
      } catch (e) {
        // Refused as not there (404) or not allowed there (405): the action moved, and nothing was
        // done. Read the system again for where it is now.
        if (!(e instanceof BmcError && (e.status === 404 || e.status === 405))) throw e;
        this.resetTargets.delete(t.address);
      }
    }
    await this.reset(t, this.resetUrl(t, await this.system(t)), RESET[op]);
  }

  async bootFromDisk(t: BmcTarget): Promise<void> {
    await this.request(t, 'PATCH Boot', t.address, 'PATCH', {
      Boot: { BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Once' },
    });
    // The system is read anyway, for its power state: its Reset target comes with it.
    const s = await this.system(t);
    await this.reset(t, this.resetUrl(t, s), s.PowerState === 'Off' ? 'On' : 'ForceRestart');
  }

  /**
   * GET a resource the BMC links to (`@odata.id`, relative or absolute) as parsed JSON. Only on the
   * BMC's own origin: a link elsewhere is refused, not followed with the BMC's credentials.
   */
  async getJson(t: BmcTarget, call: string, link: string): Promise<unknown> {
    const text = await this.request(t, call, this.ownUrl(t, call, link), 'GET');
    try {
      return JSON.parse(text);
    } catch {
      throw bmcError('redfish', call, t, 'unexpected_answer', `not JSON: ${text.slice(0, 120)}`);
    }
  }

  /** `link` resolved against the BMC's address; refused when it leaves the BMC's origin. */
  private ownUrl(t: BmcTarget, call: string, link: string): string {
    const url = new URL(link, t.address);
    if (url.origin !== new URL(t.address).origin)
      throw bmcError('redfish', call, t, 'unexpected_answer', `${url.origin} is not the BMC's origin: not called with its credentials`);
    return url.toString();
  }

  /** Where the system's Reset action is: the target its ComputerSystem names, on the BMC's own origin. */
  private resetUrl(t: BmcTarget, s: { Actions?: { '#ComputerSystem.Reset'?: { target: string } } }): string {
    const target = s.Actions?.['#ComputerSystem.Reset']?.target;
    if (!target) return `${t.address.replace(/\/+$/, '')}/Actions/ComputerSystem.Reset`;
    return this.ownUrl(t, 'Reset', target);
  }

  private async reset(t: BmcTarget, url: string, type: string): Promise<void> {
    await this.request(t, `Reset ${type}`, url, 'POST', { ResetType: type });
  }

  private missing(t: BmcTarget): never {
    throw bmcError('redfish', 'GET ComputerSystem', t, 'unexpected_answer', 'no PowerState in the ComputerSystem');
  }

  private async system(t: BmcTarget) {
    const body = await this.getJson(t, 'GET ComputerSystem', t.address);
    const r = system.safeParse(body);
    if (!r.success) {
      const i = r.error.issues[0];
      throw bmcError('redfish', 'GET ComputerSystem', t, 'unexpected_answer', `${i?.path.join('.') || '(body)'}: ${i?.message}`);
    }
    try {
      this.resetTargets.set(t.address, this.resetUrl(t, r.data));
    } catch {
      // A target off the BMC's origin is not remembered: a power call reads it again and refuses it.
    }
    return r.data;
  }

  private async request(t: BmcTarget, call: string, address: string, method: string, body?: unknown): Promise<string> {
    const url = new URL(address);
    const timeoutMs = this.o.timeoutMs ?? 15_000;
    const signal = AbortSignal.timeout(timeoutMs);
    let answer: Answer;
    try {
      // A BMC may close an idle connection sooner than we keep it. When its close has reached us,
      // undici sees it before writing and opens a new connection; when it crosses our request on the
      // wire, the request fails with the connection closed and no answer, and only a call that can be
      // sent twice is (RESENDABLE).
      const kept = this.connections.connected(url.origin);
      try {
        answer = await this.send(t, url, method, signal, body);
      } catch (e) {
        if (!kept || signal.aborted || !RESENDABLE.has(method) || !CLOSED_UNDER.has(errorCode(e))) throw e;
        answer = await this.send(t, url, method, signal, body);
      }
    } catch (e) {
      if (signal.aborted) throw bmcError('redfish', call, t, 'timeout', `no answer within ${timeoutMs / 1000} s`);
      const local = localFailure(e);
      if (local) throw bmcError('redfish', call, t, 'local_resources', local);
      const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
      throw bmcError('redfish', call, t, 'unreachable', err.cause?.code ?? err.code ?? err.cause?.message ?? err.message ?? String(e));
    }
    const { status, location, retryAfter, text } = answer;
    if (status >= 200 && status < 300) return text;
    if (status >= 300 && status < 400)
      throw bmcError(
        'redfish',
        call,
        t,
        'unexpected_answer',
        `HTTP ${status} to ${location ?? '(no location)'}: redirects are not followed with the BMC's credentials`,
        status,
      );
    const detail = `HTTP ${status}: ${redfishMessage(text) || (STATUS_CODES[status] ?? '')}`;
    if (status === 401 || status === 403) throw bmcError('redfish', call, t, 'refused_login', detail, status);
    // Busy: the guard (bmc-guard.ts) leaves this BMC alone for its Retry-After, then asks again.
    if (status === 429 || status === 503) throw markBusy(bmcError('redfish', call, t, 'bmc_error', detail, status), retryAfter);
    throw bmcError('redfish', call, t, status >= 500 ? 'bmc_error' : 'unexpected_answer', detail, status);
  }

  /** One request and its whole answer; throws what undici throws. */
  private async send(t: BmcTarget, url: URL, method: string, signal: AbortSignal, body: unknown): Promise<Answer> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${t.username}:${t.password}`).toString('base64')}`,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // undici's dispatcher API, not its fetch: a BMC call is one request and its body, and fetch's
    // WHATWG machinery (streams, Request and Response objects) cost the worker most of a standalone
    // reboot's CPU. No redirect is followed: the BMC's credentials go to its own address only.
    return this.connections.use(url.origin, async (d) => {
      const res = await d.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: method as Dispatcher.HttpMethod,
        headers,
        signal,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return {
        status: res.statusCode,
        location: header(res.headers.location),
        retryAfter: header(res.headers['retry-after']) ?? null,
        text: await res.body.text(),
      };
    });
  }
}

/**
 * The Redfish error body's message (`error.message` or its first extended info); a proxy in front of
 * the BMC may answer RFC 7807 instead (`detail`, `title`).
 */
export function redfishMessage(text: string): string {
  try {
    const body = JSON.parse(text) as {
      error?: { message?: string; '@Message.ExtendedInfo'?: { Message?: string }[] };
      detail?: unknown;
      title?: unknown;
    };
    const e = body.error;
    const problem = typeof body.detail === 'string' ? body.detail : typeof body.title === 'string' ? body.title : '';
    return e?.['@Message.ExtendedInfo']?.[0]?.Message ?? e?.message ?? problem;
  } catch {
    return text.trim().slice(0, 200);
  }
}

interface Answer {
  status: number;
  location: string | undefined;
  retryAfter: string | null;
  text: string;
}

/** The code of a failed request (undici's own, or the socket's under `cause`). */
function errorCode(e: unknown): string {
  const err = e as { code?: string; cause?: { code?: string } };
  return err.code ?? err.cause?.code ?? '';
}

/** One value of an answer's header (undici gives a list for a repeated one). */
function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
