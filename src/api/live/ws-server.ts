/**
 * graphql-ws on a `ws` server, as graphql-ws's own use/ws glue (keep-alive pings, close codes), with
 * one difference: a multiplexed result (SharedResult) is not serialized per subscriber. Its payload
 * bytes, serialized once for the group, are spliced into the `next` message as it is sent, so a
 * subscriber costs one small JSON.stringify (id, type) and one socket write.
 *
 * The splice: the message's payload serializes (toJSON) to nothing and leaves its bytes in `spliced`;
 * graphql-ws calls send() with the message synchronously right after serializing it, so the next
 * send() is that message's.
 */
import type http from 'node:http';
import type { WebSocketServer, WebSocket } from 'ws';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { Multiplexer } from './multiplexer.ts';
import { liveSubscribe, SharedResult } from './subscribe.ts';

export interface Extra { socket: WebSocket; request: http.IncomingMessage }

let spliced: Buffer | undefined;
const CLOSE = Buffer.from('}');

function payloadMarker(r: SharedResult): object {
  return { toJSON: () => { spliced = r.shared.json; return undefined; } };
}

/** The message with the spliced payload, or the message as it is. */
function withSplice(data: string): string | Buffer {
  const raw = spliced;
  spliced = undefined;
  if (!raw) return data;
  // data is {"id":"…","type":"next"}: the payload goes before the closing brace.
  return Buffer.concat([Buffer.from(`${data.slice(0, -1)},"payload":`), raw, CLOSE]);
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
        const out = withSplice(data);
        if (socket.readyState !== socket.OPEN) return resolve();
        // Resolves once written: a socket that does not drain holds its subscriber's loop (subscriber.ts).
        socket.send(out, { binary: false }, (err) => (err ? reject(err) : resolve()));
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
