/**
 * Serving the registry from a plain node:http listener (the worker's health port, the simulator), the
 * same text the API's /metrics answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metricsRegistry } from './metrics.ts';

/** Answers GET /metrics and returns true; false for any other request. */
export function serveMetrics(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET' || new URL(req.url ?? '/', 'http://x').pathname !== '/metrics') return false;
  metricsRegistry.metrics().then(
    (text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text),
    (e) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e)),
  );
  return true;
}
