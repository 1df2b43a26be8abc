/**
 * Input is bounded before it is read, on every route of the API process:
 *
 *   - the HTTP server's listener (`bodyGate`, before the fast path and express) refuses a declared
 *     Content-Length over the caller's limit with 413 without reading a byte: the anonymous limit when
 *     the request carries no credential at all, the authenticated one otherwise. A body the route does
 *     not read (or reads only in part) is never drained: the answer closes the connection instead
 *     (`BoundedResponse`), as Node would otherwise read whatever the client keeps sending;
 *   - the JSON doors (the GraphQL edge, the REST door) read bodies with `jsonReader`, after the caller
 *     was authenticated: at most the limit for that caller (a bad credential gets the anonymous one),
 *     counted as the bytes arrive, so a chunked body is refused the moment it passes the limit, and
 *     body-parser (which would drain the whole request before answering) only ever sees what was read;
 *   - JSON nested deeper than MAX_JSON_DEPTH is a 400 naming the limit, found by an iterative scan of
 *     the raw text before it is parsed (`jsonTooDeep`) or of an already parsed value (`valueTooDeep`),
 *     so no recursive walk behind the doors (key conversion, input checks) ever sees deeper input.
 *
 * Refusals are errors with `status`, `limit` (`bodyBytes` or `jsonDepth`) and a message for the client.
 */
import http from 'node:http';
import net from 'node:net';
import bodyParser from 'body-parser';
import type express from 'express';

/** Deepest nesting of arrays and objects accepted in any JSON input (the deepest useful body is about 8). */
export const MAX_JSON_DEPTH = 64;

/** A refusal worded for the client: the status to answer and which limit it hit. */
export interface BoundError extends Error {
  status: number;
  limit: 'bodyBytes' | 'jsonDepth';
  /** body-parser's word for the same thing, so that code reading `type` keeps working. */
  type: string;
}

function boundError(status: number, limit: BoundError['limit'], message: string): BoundError {
  return Object.assign(new Error(message), {
    status,
    limit,
    type: limit === 'bodyBytes' ? 'entity.too.large' : 'entity.too.deep',
    expose: true,
  });
}

export const tooDeep = (): BoundError =>
  boundError(400, 'jsonDepth', `JSON nested more than ${MAX_JSON_DEPTH} levels deep; the limit is ${MAX_JSON_DEPTH}`);

export const tooLarge = (limit: number, anonymous: boolean): BoundError =>
  boundError(
    413,
    'bodyBytes',
    `request body is larger than ${limit.toLocaleString('en')} bytes, the limit ${
      anonymous ? 'without a valid credential (Authorization: Bearer <token>)' : 'of this API'
    }`,
  );

/**
 * Whether JSON text nests arrays and objects deeper than `max`: one pass over the characters, counting
 * brackets outside strings, stopping at the first one too deep. It does not validate; JSON.parse does.
 * Works on UTF-8 bytes as on a string (the characters it looks at are ASCII).
 */
export function jsonTooDeep(text: string | Uint8Array, max = MAX_JSON_DEPTH): boolean {
  const bytes = typeof text !== 'string';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = bytes ? (text as Uint8Array)[i]! : (text as string).charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Whether a parsed value nests arrays and objects deeper than `max` (an explicit stack, no recursion). */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d + 1 > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x && typeof x === 'object') stack.push([x, d + 1]);
  }
  return false;
}

/** body-parser's `verify` hook: sees the (decompressed) bytes before JSON.parse does. */
function refuseDeep(_req: unknown, _res: unknown, buf: Buffer, encoding: string | null): void {
  const utf8 = !encoding || /^utf-?8$/i.test(encoding);
  if (jsonTooDeep(utf8 ? buf : new TextDecoder(encoding!).decode(buf))) throw tooDeep();
}

/** The request's body as sent, at most `limit` bytes, counted as they arrive; past it, reading stops. */
function readAtMost(req: http.IncomingMessage, limit: number): Promise<Buffer | 'too large' | Error> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const finish = (v: Buffer | 'too large' | Error) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      resolve(v);
    };
    const onData = (c: Buffer) => {
      got += c.length;
      if (got <= limit) return void chunks.push(c);
      req.pause(); // the rest stays unread; the answer closes the connection (BoundedResponse)
      finish('too large');
    };
    const onEnd = () => finish(Buffer.concat(chunks, got));
    const onError = (e: Error) => finish(Object.assign(e, { status: 400 }));
    const onClose = () => finish(Object.assign(new Error('request aborted'), { status: 400 }));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** body-parser's JSON parser (express.json is the same function), typed for a plain Node request. */
type JsonParser = ReturnType<typeof bodyParser.json>;

/** A request of its own for bytes already read: body-parser reads it as it would the original, and leaves the body here. */
class ReadBody extends http.IncomingMessage {
  body?: unknown;
}

/**
 * What a body-parser JSON parser makes of bytes already read from `req`: its body, or its error (status,
 * `type` and wording as it gives them for a live request). The bytes are replayed on a request detached
 * from any connection, carrying `req`'s headers (content type, charset, encoding, length).
 */
export function parseRead(parser: JsonParser, req: http.IncomingMessage, raw: Buffer): Promise<JsonRead> {
  const copy = new ReadBody(new net.Socket());
  copy.headers = req.headers;
  copy.push(raw);
  copy.push(null);
  return new Promise((resolve) =>
    parser(copy, new http.ServerResponse(copy), (e?: Error) => resolve(e ? { error: e } : { body: copy.body })),
  );
}

export type JsonRead = { body: unknown } | { error: Error };

/**
 * A JSON body reader: `(req, limit, anonymous)` reads at most `limit` bytes (413 past it, declared or
 * counted), refuses nesting past MAX_JSON_DEPTH (400), and parses as express.json does (`strict`, and
 * only application/json unless `anyType`). A request without a body, or of another type, is left
 * unread with body undefined.
 */
export function jsonReader(o: { strict?: boolean; anyType?: boolean } = {}) {
  const parsers = new Map<number, JsonParser>();
  const parserFor = (limit: number) => {
    let p = parsers.get(limit);
    if (!p) {
      p = bodyParser.json({ limit, strict: o.strict ?? true, type: () => true, verify: refuseDeep });
      parsers.set(limit, p);
    }
    return p;
  };
  return async (req: express.Request, limit: number, anonymous: boolean): Promise<JsonRead> => {
    const h = req.headers;
    if (h['transfer-encoding'] === undefined && h['content-length'] === undefined) return { body: undefined };
    if (!o.anyType && !req.is('application/json')) return { body: undefined };
    if (Number(h['content-length']) > limit) return { error: tooLarge(limit, anonymous) };
    const raw = await readAtMost(req, limit);
    if (raw === 'too large') return { error: tooLarge(limit, anonymous) };
    if (raw instanceof Error) return { error: raw };
    return parseRead(parserFor(limit), req, raw);
  };
}

/** Paths of the BOS REST door, whose errors are problem documents. */
const REST_PATH = /^\/(v2|apis\/bos)(\/|$|\?)/;

/** Whether `req` says it has a body: a length over 0, or a chunked one. */
function declaresBody(req: http.IncomingMessage): boolean {
  return Number(req.headers['content-length']) > 0 || req.headers['transfer-encoding'] !== undefined;
}

type HeadArgument = http.OutgoingHttpHeaders | http.OutgoingHttpHeader[];

/**
 * The API's responses, given to its HTTP servers as their `ServerResponse` class (Node's documented
 * way to extend it): an answer whose head is written before the request's body was read to the end
 * says `Connection: close`, and Node closes the connection after it instead of reading (and
 * discarding) whatever the client keeps sending to keep it alive. Express moves each response it
 * handles onto its app's own prototype: `closeUnreadBodies(app)` gives that prototype the same head.
 */
export class BoundedResponse extends http.ServerResponse {
  override writeHead(statusCode: number, message?: string | HeadArgument, headers?: HeadArgument): this {
    if (!this.headersSent && !this.req.complete && declaresBody(this.req)) this.setHeader('connection', 'close');
    // Node's own reading of the arguments: a string is the status message; headers, when given, win.
    return typeof message === 'string' ? super.writeHead(statusCode, message, headers) : super.writeHead(statusCode, headers ?? message);
  }
}

/**
 * An express app's responses close as BoundedResponse's do: express re-parents every response onto
 * `app.response` (its per-app prototype; "Overriding the Express API" in express's guide), above
 * Node's ServerResponse, so the app's prototype takes BoundedResponse's writeHead.
 */
export function closeUnreadBodies(app: express.Express): void {
  // Typed as BoundedResponse's; it returns its own `this`, here express's response.
  app.response.writeHead = BoundedResponse.prototype.writeHead as express.Response['writeHead'];
}

/** The HTTP listener's first step: true when it answered (413) and the request goes no further. */
export function bodyGate(o: { max: number; anonymousMax: number }): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    if (!declaresBody(req)) return false;
    const anonymous = !req.headers.authorization;
    const limit = anonymous ? Math.min(o.max, o.anonymousMax) : o.max;
    if (!(Number(req.headers['content-length']) > limit)) return false;
    const e = tooLarge(limit, anonymous);
    const rest = REST_PATH.test(req.url ?? '');
    res.statusCode = 413;
    res.setHeader('content-type', rest ? 'application/problem+json' : 'application/json; charset=utf-8');
    res.end(
      JSON.stringify(
        rest
          ? { type: 'about:blank', title: 'Payload Too Large', status: 413, detail: e.message }
          : { errors: [{ message: e.message, extensions: { code: 'PAYLOAD_TOO_LARGE', limit: e.limit } }] },
      ),
    );
    return true;
  };
}
