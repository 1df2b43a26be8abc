/**
 * graphql-ws on a `ws` server, as graphql-ws's own use/ws glue (keep-alive pings, close codes), with
 * one difference: a multiplexed result (SharedResult) is not serialized per subscriber. Its payload
 * bytes, serialized once for the group, are spliced into the `next` message as it is sent, so a
 * subscriber costs one small JSON.stringify (id, type) and one socket write.
 *
 * The splice: the message's payload serializes (toJSON) to nothing and leaves its bytes in `spliced`;
 * graphql-ws calls send() with the message synchronously right after serializing it, so the next
 * send() is that message's. On a socket that negotiated permessage-deflate the shared payload goes out
 * compressed once for all (deflate.ts); everything else goes uncompressed.
 */
import type http from 'node:http';
import type { WebSocketServer, WebSocket } from 'ws';
import { CloseCode, handleProtocols, makeServer, type FormattedExecutionResult, type ServerOptions } from 'graphql-ws';
import type { Multiplexer } from './multiplexer.ts';
import { liveSubscribe, SharedResult } from './subscribe.ts';
import { sendDeflated } from './deflate.ts';
import { observeWriteLag } from './live-metrics.ts';
import type { SharedPayload } from './subscriber.ts';

export interface Extra {
  socket: WebSocket;
  request: http.IncomingMessage;
}

let spliced: SharedPayload | undefined;
const CLOSE = Buffer.from('}');

/** A `next` message's payload that serializes to nothing, leaving the shared bytes in `spliced`. */
class SplicedPayload implements FormattedExecutionResult {
  /** Never read: the payload's bytes are `shared.json`. */
  data?: null;
  constructor(private readonly shared: SharedPayload) {}
  toJSON(): undefined {
    spliced = this.shared;
    return undefined;
  }
}

/** The message's text up to its payload, and the shared payload (none: send the message as it is). */
function takeSplice(data: string): { prefix: string; shared: SharedPayload } | undefined {
  const shared = spliced;
  spliced = undefined;
  // data is {"id":"…","type":"next"}: the payload goes before the closing brace.
  return shared && { prefix: `${data.slice(0, -1)},"payload":`, shared };
}

export function useLiveServer(
  options: ServerOptions<Record<string, unknown>, Extra>,
  ws: WebSocketServer,
  mux: Multiplexer,
  keepAlive = 12_000,
): { dispose(): Promise<void> } {
  const server = makeServer<Record<string, unknown>, Extra>({
    ...options,
    subscribe: liveSubscribe(mux),
    // A shared result's bytes are spliced in as it is sent; any other result goes through the caller's onNext.
    onNext: (ctx, id, payload, args, result) =>
      result instanceof SharedResult ? new SplicedPayload(result.shared) : options.onNext?.(ctx, id, payload, args, result),
  });
  ws.options.handleProtocols = handleProtocols;
  ws.on('connection', (socket, request) => {
    socket.once('error', () => socket.close(CloseCode.InternalServerError, 'Internal server error'));
    let pongWait: NodeJS.Timeout | undefined;
    const ping = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), keepAlive);
      socket.once('pong', () => {
        clearTimeout(pongWait);
        pongWait = undefined;
      });
      socket.ping();
    }, keepAlive);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            const splice = takeSplice(data);
            if (socket.readyState !== socket.OPEN) return resolve();
            // Resolves once written: a socket that does not drain holds its subscriber's loop (subscriber.ts).
            const done = (err?: Error) => {
              if (err) return reject(err);
              if (splice) observeWriteLag(splice.shared.oldestAt);
              resolve();
            };
            if (splice && sendDeflated(socket, splice.prefix, splice.shared.json, done)) return;
            const out = splice ? Buffer.concat([Buffer.from(splice.prefix), splice.shared.json, CLOSE]) : data;
            socket.send(out, { binary: false, compress: false }, done);
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on('message', async (event) => {
            try {
              await cb(String(event));
            } catch {
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            }
          }),
      },
      { socket, request },
    );
    socket.once('close', (code, reason) => {
      clearTimeout(pongWait);
      clearInterval(ping);
      void closed(code, String(reason));
    });
  });
  return {
    dispose: async () => {
      for (const client of ws.clients) client.close(1001, 'Going away');
      ws.removeAllListeners();
      await new Promise<void>((resolve, reject) => ws.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
