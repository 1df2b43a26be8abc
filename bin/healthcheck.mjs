#!/usr/bin/env node
// The image's HEALTHCHECK: exit 0 when this container's bootorch answers /healthz with 200. The
// worker's listener is WORKER_HEALTH_PORT, the api's PORT (default 4000); BOOTORCH_HEALTH_URL
// overrides both (e.g. the sim's port, or https when the api serves TLS).
const port = process.env.WORKER_HEALTH_PORT || process.env.PORT || '4000';
const url = process.env.BOOTORCH_HEALTH_URL || `http://127.0.0.1:${port}/healthz`;
try {
  const r = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(r.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
