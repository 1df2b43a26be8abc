/**
 * One graphql-ws subscription's first answer (data or errors), with a deadline: enough to see whether
 * a subscription was authorized, refused, or rejected its arguments.
 */
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

export interface FirstResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  /** Set when the server closed the connection instead of answering (4403: no valid credential). */
  closed?: { code: number; reason: string };
}

export async function firstResult(
  wsUrl: string,
  params: Record<string, string>,
  query: string,
  variables: Record<string, unknown> = {},
  timeoutMs = 10_000,
): Promise<FirstResult> {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, lazy: true, retryAttempts: 0, connectionParams: params });
  try {
    return await new Promise<FirstResult>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`no answer to ${query.slice(0, 60)} within ${timeoutMs} ms`)), timeoutMs);
      const settle = (r: FirstResult) => {
        clearTimeout(deadline);
        resolve(r);
      };
      const stop = client.subscribe<Record<string, unknown>>(
        { query, variables },
        {
          next: (r) => {
            settle(r as FirstResult);
            stop();
          },
          error: (e) => {
            const close = e as { code?: unknown; reason?: unknown };
            settle(
              Array.isArray(e)
                ? { errors: e }
                : typeof close.code === 'number'
                  ? {
                      closed: { code: close.code, reason: String(close.reason ?? '') },
                      errors: [{ message: String(close.reason ?? close.code) }],
                    }
                  : { errors: [{ message: String(e) }] },
            );
          },
          complete: () => settle({ data: null }),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}
