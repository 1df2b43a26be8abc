/**
 * permessage-deflate (RFC 7692) for shared payloads, compressed once per group message instead of once
 * per subscriber. A message is a run of deflate blocks: the subscriber's own prefix (`{"id":…,
 * "payload":`) as a stored block, the shared payload compressed on its own (raw deflate, sync flush:
 * no back reference leaves it, so it is valid after any prefix), the closing `}` as a stored block,
 * then the first byte of the empty stored block whose other 4 bytes (00 00 ff ff) RFC 7692 has the
 * sender drop and the receiver append. Every other message on such a socket is sent uncompressed
 * (RSV1 clear, which the RFC allows per message), so ws never deflates and frames stay in order.
 */
import zlib from 'node:zlib';
import type { WebSocket } from 'ws';
import { deflateSocket, frame } from './ws-internals.ts';

const deflated = new WeakMap<Buffer, Buffer>();

/** Raw deflate of a payload, once whatever the number of sockets it goes to; ends with 00 00 ff ff. */
function deflateOnce(json: Buffer): Buffer {
  let d = deflated.get(json);
  if (!d) deflated.set(json, (d = zlib.deflateRawSync(json, { finishFlush: zlib.constants.Z_SYNC_FLUSH, windowBits: 15 })));
  return d;
}

/** A non-final stored block (data under 64 KiB). */
function stored(data: Buffer): Buffer {
  const head = Buffer.from([0, data.length & 0xff, data.length >> 8, ~data.length & 0xff, (~data.length >> 8) & 0xff]);
  return Buffer.concat([head, data]);
}

const CLOSE = stored(Buffer.from('}'));
const TAIL = Buffer.from([0]);

/** The compressed frame payload of `prefix` + payload + `}`. */
export function deflatedMessage(prefix: string, json: Buffer): Buffer {
  return Buffer.concat([stored(Buffer.from(prefix)), deflateOnce(json), CLOSE, TAIL]);
}

/**
 * Send a shared payload compressed, when the socket negotiated permessage-deflate with a 32 KiB window
 * and its sender is idle; false when it did not (the caller sends it uncompressed). Past the public
 * `extensions`, what it reads of the socket is ws-private (ws-internals.ts): if an upgrade moved it,
 * this throws.
 */
export function sendDeflated(socket: WebSocket, prefix: string, json: Buffer, cb: (err?: Error) => void): boolean {
  if (!socket.extensions.includes('permessage-deflate')) return false;
  const { serverMaxWindowBits: bits, sender } = deflateSocket(socket);
  if ((bits !== undefined && bits !== true && Number(bits) !== 15) || sender._state !== 0) return false;
  sender.sendFrame(frame(deflatedMessage(prefix, json), { fin: true, rsv1: true, opcode: 1, mask: false, readOnly: false }), cb);
  return true;
}
