/**
 * `bootorch sim` as a server: one port serving HSM (/hsm/v2), PCS (/power-control/v1 and root
 * /transitions, /power-status), BSS (/boot/v1), CFS (/v3), S3 objects (/s3/<bucket>/<key>) and the
 * nodes' BMCs as Redfish (/redfish/v1/Systems/<xname>) from
 * one SimWorld, with the services' quirks and the world's fault knobs (down = 503, failRate = 500,
 * slowMs delays the answer, timeout never answers). Plain node:http.
 *
 * With `report`, the nodes' bos-reporters call bootorch's reportBootState over HTTP (src/reporter).
 * The simulator's own routes (/healthz, /sim/info, /sim/counters, /sim/reports, /sim/faults) are in
 * http/control.ts; GET /metrics serves the process's Prometheus metrics (requests served by service,
 * endpoint and code).
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { reportOnce, type ReportPost } from '../reporter/agent.ts';
import { bssRoutes } from './http/bss.ts';
import { cfsRoutes } from './http/cfs.ts';
import { hsmRoutes } from './http/hsm.ts';
import { pcsRoutes } from './http/pcs.ts';
import { compile, match, problem, stripPrefix, type Ctx, type Reply } from './http/router.ts';
import { controlRoute, recordDelivered, type ReportCounts } from './http/control.ts';
import { s3Routes } from './http/s3.ts';
import { REDFISH_SYSTEM, redfishBusy, redfishRoutes } from './http/redfish.ts';
import type { SimWorld } from './world.ts';
import { serveMetrics } from '../observability/http.ts';
import { simRequests } from '../observability/metrics.ts';
import { Turns } from '../domain/lists.ts';

const ROUTES = compile([...hsmRoutes, ...pcsRoutes, ...bssRoutes, ...cfsRoutes, ...s3Routes, ...redfishRoutes]);
const MAX_BODY = 32 * 1024 * 1024;

/** One request and its answer, as seen on the wire (for contract tests and debugging). */
export interface Exchange {
  service: string;
  /** `METHOD /template`, or undefined when no route matched. */
  endpoint?: string;
  /** The route template (e.g. /v3/components/{component_id}). */
  template?: string;
  method: string;
  /** Path after gateway-prefix stripping, and the raw query string. */
  path: string;
  query: string;
  requestHeaders: Record<string, string | string[] | undefined>;
  requestBody: string;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

export interface SimServerOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  onExchange?: (x: Exchange) => void;
  /** Serve HTTPS with this key and certificate (PEM), e.g. to test the clients' CA bundle. */
  tls?: { key: string; cert: string };
  /**
   * Nodes report to bootorch: GraphQL endpoint (BOOTORCH_URL; several, comma-separated, spread the
   * nodes over API replicas by xname) and the bearer token per node. `connections` bounds the
   * reporters' sockets per endpoint (default 128, kept alive): 10,000 nodes booting at once would
   * otherwise open 10,000 connections, which costs both sides more than the reports.
   */
  report?: { url: string; authToken?: string | ((xname: string) => string | undefined); timeoutMs?: number; connections?: number };
}

export interface SimServer {
  url: string;
  port: number;
  /** Base URLs to give the HTTP adapters (HSM_URL, PCS_URL, BSS_URL, CFS_URL, S3_URL). */
  urls: { hsm: string; pcs: string; bss: string; cfs: string; s3: string };
  close(): Promise<void>;
}

export async function startSimServer(world: SimWorld, o: SimServerOptions = {}): Promise<SimServer> {
  let agent: Agent | undefined;
  if (o.report) {
    const { url, authToken, timeoutMs } = o.report;
    const urls = url
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    const connections = o.report.connections ?? 128;
    const pool = new Agent({ connections, keepAliveTimeout: 30_000 });
    agent = pool;
    const viaPool: ReportPost = async (to, r) => {
      const u = new URL(to);
      const res = await pool.request({
        origin: u.origin,
        path: u.pathname + u.search,
        method: 'POST',
        headers: r.headers,
        body: r.body,
        headersTimeout: r.timeoutMs,
        bodyTimeout: r.timeoutMs,
      });
      return { status: res.statusCode, ok: res.statusCode >= 200 && res.statusCode < 300, text: await res.body.text() };
    };
    // A report waits for one of its endpoint's sockets here, before its timeout starts: a real node
    // has its own connection, so its timeout is the request's, not a shared pool's queue (queued in
    // undici, thousands of reports timed out waiting, aborted their sockets and reported again).
    const turns = urls.map(() => new Turns(connections));
    world.setReportHandler(async (xname, bssToken) => {
      const i = spread(xname, urls.length);
      await turns[i]!.take();
      try {
        await reportOnce({
          url: urls[i]!,
          xname,
          bssToken,
          timeoutMs,
          post: viaPool,
          authToken: typeof authToken === 'function' ? authToken(xname) : authToken,
        });
      } finally {
        turns[i]!.give();
      }
    });
  }
  const reports: ReportCounts = { delivered: 0, refused: 0, acknowledged: [] };
  const unsubscribe = [
    world.on('report', ({ id, token }) => recordDelivered(reports, id, token)),
    world.on('report-error', () => {
      reports.refused++;
    }),
  ];
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (serveMetrics(req, res)) return;
    handle(world, reports, req, res, o.onExchange).catch(() => res.destroy());
  };
  const server = o.tls ? https.createServer({ key: o.tls.key, cert: o.tls.cert }, listener) : http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `${o.tls ? 'https' : 'http'}://${host}:${addr.port}`;
  return {
    url,
    port: addr.port,
    urls: { hsm: url, pcs: `${url}/power-control/v1`, bss: url, cfs: url, s3: `${url}/s3` },
    close: () =>
      new Promise<void>((resolve) => {
        // Hung requests (the timeout knob) would hold close() forever: cut every connection.
        for (const off of unsubscribe) off();
        server.closeAllConnections();
        void agent?.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Which of `n` endpoints a node reports to: a stable spread by xname. */
function spread(xname: string, n: number): number {
  let h = 0;
  for (let i = 0; i < xname.length; i++) h = (h * 31 + xname.charCodeAt(i)) >>> 0;
  return h % n;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Answer one request from the world (the services, the simulator's own routes); also a BMC farm's listeners' handler. */
export async function handle(
  world: SimWorld,
  reports: ReportCounts,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  onExchange?: (x: Exchange) => void,
  /** The node whose own BMC received the request (farm and host listeners): its faults apply to every route. */
  bmc?: string,
) {
  const raw = await readBody(req);
  const u = new URL(req.url ?? '/', 'http://sim');
  const method = (req.method ?? 'GET').toUpperCase();
  const path = stripPrefix(u.pathname);
  const found = match(ROUTES, method, path);
  const send = (reply: Reply, service: string, endpoint?: string, template?: string) => {
    const headers: Record<string, string> = { ...(reply.headers ?? {}) };
    let body = '';
    if (reply.json !== undefined) {
      body = JSON.stringify(reply.json);
      headers['content-type'] = reply.contentType ?? 'application/json';
    } else if (reply.text !== undefined) {
      body = reply.text;
      headers['content-type'] = reply.contentType ?? 'text/plain';
    }
    headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(reply.status, headers);
    res.end(body);
    if (endpoint) simRequests.inc({ service, endpoint, code: String(reply.status) });
    onExchange?.({
      service,
      endpoint,
      template,
      method,
      path,
      query: u.search.replace(/^\?/, ''),
      requestHeaders: req.headers,
      requestBody: raw,
      status: reply.status,
      responseHeaders: headers,
      responseBody: body,
    });
  };
  const control = controlRoute(world, reports, method, u.pathname, raw, u.searchParams);
  if (control) return send(control, 'sim');
  if ('allowed' in found) {
    const reply = found.allowed.length ? problem(405, `method ${method} not allowed on ${path}`) : problem(404, `no route for ${path}`);
    return send(reply, 'none');
  }
  const { route, params } = found;
  const reply = (r: Reply) => send(r, route.service, route.endpoint, route.path);
  // A node's own BMC (its Redfish face) first: counted while in flight, and its faults.
  const bmcId = bmc ?? (params.id && route.path.startsWith(REDFISH_SYSTEM) ? params.id : undefined);
  if (bmcId) {
    res.on('close', world.counters.enterBmc(bmcId));
    const b = world.faults.decideBmc(bmcId);
    if (b.kind === 'hang') return;
    if (b.kind === 'refuse') return void req.socket.destroy();
    if (b.kind === 'busy') {
      world.counters.bmcBusyAnswers++;
      return reply(redfishBusy(b.status, b.retryAfter));
    }
    if (b.delayMs > 0) await world.timers.sleep(b.delayMs);
  }
  const decision = world.decide(route.service, route.endpoint);
  if (decision.kind === 'down') return reply(problem(503, `${route.service.toUpperCase()} is unavailable (simulated outage)`));
  // The timeout knob: never answer; the client's read timeout fires, close() cuts the connection.
  if (decision.kind === 'hang') return;
  if (decision.delayMs > 0) await world.timers.sleep(decision.delayMs);
  if (decision.kind === 'fail') return reply(problem(500, 'simulated internal error'));
  let body: unknown;
  let badJson = false;
  if (raw.trim()) {
    try {
      body = JSON.parse(raw);
    } catch {
      badJson = true;
    }
  }
  const ctx: Ctx = { world, method, path, query: u.searchParams, params, body, badJson, headers: req.headers, bmc };
  let out: Reply;
  try {
    out = route.handler(ctx);
  } catch (e) {
    out = problem(500, `simulator error: ${(e as Error).message}`);
  }
  reply(out);
}
