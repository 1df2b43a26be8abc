/**
 * What deflate.ts needs of `ws` beyond its public API, in one place: ws has no way to send a frame
 * whose payload is already compressed. Written for ws 8.23.0, which package.json pins exactly. Each
 * part is checked where it is read, so an upgrade that moves one throws naming it (at the API's start
 * with BOOTORCH_WS_DEFLATE for the static parts, on a deflated send for a socket's), instead of
 * shared payloads quietly going out uncompressed: test/unit/ws-internals.test.ts checks them against
 * the installed ws, test/integration/live-deflate.test.ts that payloads do go out compressed.
 *
 *  - `Sender.frame(data, options)` (lib/sender.js): a frame's head and payload as ws builds them;
 *  - a socket's `_extensions['permessage-deflate'].params`: the parameters it negotiated;
 *  - a socket's `_sender`: `_state` (0 while nothing is being compressed or waiting) and
 *    `sendFrame(list, cb)`, which writes a framed message in order with the socket's others.
 */
import * as ws from 'ws';
import type { WebSocket } from 'ws';

interface FrameOptions {
  fin: boolean;
  rsv1: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
}

interface Sender {
  /** 0 (DEFAULT) while the sender is idle: nothing being compressed, nothing queued behind it. */
  _state: number;
  sendFrame(list: Buffer[], cb: (err?: Error) => void): void;
}

/** The ws-private parts deflate.ts uses of a socket that negotiated permessage-deflate. */
interface DeflateSocket {
  /** The negotiated `server_max_window_bits`: true, a number (or its text), or undefined when not given. */
  serverMaxWindowBits: unknown;
  sender: Sender;
}

const WRITTEN_FOR = 'ws 8.23.0';

function moved(what: string): Error {
  return new Error(
    `ws internals: ${what} is not where live/ws-internals.ts (written for ${WRITTEN_FOR}) reads it; update that module for the installed ws, or run without BOOTORCH_WS_DEFLATE`,
  );
}

const isObject = (x: unknown): x is object => typeof x === 'object' && x !== null;
const isFrame = (f: unknown): f is (data: Buffer, o: FrameOptions) => Buffer[] => typeof f === 'function';
const isSender = (s: unknown): s is Sender =>
  isObject(s) && typeof Reflect.get(s, '_state') === 'number' && typeof Reflect.get(s, 'sendFrame') === 'function';

let checkedFrame: ((data: Buffer, o: FrameOptions) => Buffer[]) | undefined;

/** ws's `Sender.frame` and `Sender.prototype.sendFrame`, checked (the API calls this at start when it serves permessage-deflate). */
export function checkWsInternals(): (data: Buffer, o: FrameOptions) => Buffer[] {
  if (checkedFrame) return checkedFrame;
  const sender: unknown = Reflect.get(ws, 'Sender');
  if (typeof sender !== 'function') throw moved('Sender');
  const f: unknown = Reflect.get(sender, 'frame');
  if (!isFrame(f)) throw moved('Sender.frame');
  const proto: unknown = Reflect.get(sender, 'prototype');
  if (!isObject(proto) || typeof Reflect.get(proto, 'sendFrame') !== 'function') throw moved('Sender.prototype.sendFrame');
  checkedFrame = f;
  return f;
}

/** A frame of `data` as ws builds it (head and payload; a server's frames are unmasked). */
export function frame(data: Buffer, o: FrameOptions): Buffer[] {
  return checkWsInternals()(data, o);
}

/**
 * The private parts deflate.ts uses of a socket whose public `extensions` name permessage-deflate,
 * checked: throws naming the one that moved.
 */
export function deflateSocket(socket: WebSocket): DeflateSocket {
  const extensions: unknown = Reflect.get(socket, '_extensions');
  const pmd: unknown = isObject(extensions) ? Reflect.get(extensions, 'permessage-deflate') : undefined;
  const params: unknown = isObject(pmd) ? Reflect.get(pmd, 'params') : undefined;
  if (!isObject(params)) throw moved("WebSocket._extensions['permessage-deflate'].params");
  const sender: unknown = Reflect.get(socket, '_sender');
  if (!isSender(sender)) throw moved('WebSocket._sender (_state, sendFrame)');
  return { serverMaxWindowBits: Reflect.get(params, 'server_max_window_bits'), sender };
}
