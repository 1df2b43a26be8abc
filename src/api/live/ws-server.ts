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
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { Multiplexer } from './multiplexer.ts';
import { liveSubscribe, SharedResult } from './subscribe.ts';
import { sendDeflated } from './deflate.ts';

export interface Extra { socket: WebSocket; request: http.IncomingMessage }

let spliced: Buffer | undefined;
const CLOSE = Buffer.from('}');

function payloadMarker(r: SharedResult): object {
  return { toJSON: () => { spliced = r.shared.json; return undefined; } };
}

/** The message's text up to its payload, and the shared payload's bytes (none: send the message as it is). */
function takeSplice(data: string): { prefix: string; json: Buffer } | undefined {
  const json = spliced;
  spliced = undefined;
  // data is {"id":"…","type":"next"}: the payload goes before the closing brace.
  return json && { prefix: `${data.slice(0, -1)},"payload":`, json };
}

export function useLiveServer(options: ServerOptions<Record<string, unknown>, Extra>, ws: WebSocketServer, mux: Multiplexer,
  keepAlive = 12_000): { dispose(): Promise<void> } {
  const server = makeServer<Record<string, unknown>, Extra>({
    ...options,
    subscribe: liveSubscribe(mux) as ServerOptions['subscribe'],
    onNext: (_ctx, _id, _payload, _args, result) => (result instanceof SharedResult ? payloadMarker(result) as never : undefined),
  });
  ws.options.handleProtocols = handleProtocols;
  ws.on('connection', (socket, request) => {
    socket.once('error', () => socket.close(CloseCode.InternalServerError, 'Internal server error'));
    let pongWait: NodeJS.Timeout | undefined;
    const ping = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), keepAlive);
      socket.once('pong', () => { clearTimeout(pongWait); pongWait = undefined; });
      socket.ping();
    }, keepAlive);
    const closed = server.opened({
      protocol: socket.protocol,
      send: (data) => new Promise<void>((resolve, reject) => {
        const shared = takeSplice(data);
        if (socket.readyState !== socket.OPEN) return resolve();
        // Resolves once written: a socket that does not drain holds its subscriber's loop (subscriber.ts).
        const done = (err?: Error) => (err ? reject(err) : resolve());
        if (shared && sendDeflated(socket, shared.prefix, shared.json, done)) return;
        const out = shared ? Buffer.concat([Buffer.from(shared.prefix), shared.json, CLOSE]) : data;
        socket.send(out, { binary: false, compress: false }, done);
      }),
      close: (code, reason) => socket.close(code, reason),
      onMessage: (cb) => socket.on('message', async (event) => {
        try {
          await cb(String(event));
        } catch {
          socket.close(CloseCode.InternalServerError, 'Internal server error');
        }
      }),
    }, { socket, request });
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
