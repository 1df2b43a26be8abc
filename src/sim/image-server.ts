/**
 * The simulator's image server: disk images over real HTTP (`GET /images/<name>`) at a bandwidth it
 * models per download (a node's link) and in total (the server's uplink), so that many deploys at once
 * take as long as the network they share would make them. Each response goes out in chunks; a chunk
 * leaves when both its download's link and the shared uplink have had the time to carry it (each a
 * clock of when it is next free, advanced by chunk bytes / rate), so downloads share the uplink in
 * turn and none exceeds its link. 0 as a rate: no limit there.
 * Counts what it served (/counters as JSON): downloads started and finished, bytes, the most at once.
 */
import http from 'node:http';

export interface ImageServerOptions {
  /** Mbit/s of one download (a node's link); 0 = no limit. */
  nodeMbps: number;
  /** Mbit/s of all downloads together (the server's uplink); 0 = no limit. */
  totalMbps: number;
  /** Bytes per write (default 64 KiB). */
  chunkBytes?: number;
  port?: number;
  host?: string;
}

export interface ImageServerCounts {
  started: number;
  finished: number;
  bytes: number;
  /** Downloads in progress at once, at the most. */
  peak: number;
}

export interface ImageServer {
  /** The URL of an image added with `add`. */
  url(name: string): string;
  add(name: string, body: Buffer): void;
  counts(): ImageServerCounts;
  close(): Promise<void>;
}

const secondsPerByte = (mbps: number) => (mbps > 0 ? 8 / (mbps * 1e6) : 0);

export async function startImageServer(o: ImageServerOptions): Promise<ImageServer> {
  const images = new Map<string, Buffer>();
  const chunk = o.chunkBytes ?? 64 * 1024;
  const perNode = secondsPerByte(o.nodeMbps);
  const perTotal = secondsPerByte(o.totalMbps);
  const counts: ImageServerCounts = { started: 0, finished: 0, bytes: 0, peak: 0 };
  let active = 0;
  /** When the uplink is next free, ms on performance.now()'s clock. */
  let uplinkFree = 0;

  const send = async (res: http.ServerResponse, body: Buffer) => {
    let linkFree = performance.now();
    for (let at = 0; at < body.length && !res.destroyed; at += chunk) {
      const part = body.subarray(at, Math.min(body.length, at + chunk));
      const now = performance.now();
      uplinkFree = Math.max(uplinkFree, now) + part.length * perTotal * 1000;
      linkFree = Math.max(linkFree, now) + part.length * perNode * 1000;
      const leave = Math.max(uplinkFree, linkFree);
      if (leave > now) await new Promise((r) => setTimeout(r, leave - now));
      if (!res.write(part)) await new Promise((r) => res.once('drain', r));
      counts.bytes += part.length;
    }
    res.end();
  };

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://images').pathname;
    if (path === '/counters') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
    const body = path.startsWith('/images/') ? images.get(decodeURIComponent(path.slice(8))) : undefined;
    if (!body) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no image at ${path}\n`);
    counts.started++;
    active++;
    counts.peak = Math.max(counts.peak, active);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
    send(res, body)
      .then(() => {
        if (!res.destroyed) counts.finished++;
      })
      .catch(() => res.destroy())
      .finally(() => {
        active--;
      });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, o.host ?? '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const base = `http://${o.host ?? '127.0.0.1'}:${port}`;
  return {
    url: (name) => `${base}/images/${encodeURIComponent(name)}`,
    add: (name, body) => void images.set(name, body),
    counts: () => ({ ...counts }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
