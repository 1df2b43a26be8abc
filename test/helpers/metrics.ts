/**
 * Reading Prometheus text: one series' value, or every sample of a metric, from a process's /metrics
 * or this process's registry.
 */
import { metricsRegistry } from '../../src/observability/metrics.ts';

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample of `name` (exactly that name: ask for `x_bucket` / `x_count` for histogram parts). */
export function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    // Prometheus writes infinities as +Inf / -Inf, which Number() does not read.
    out.push({ labels, value: m[3] === '+Inf' ? Number.POSITIVE_INFINITY : m[3] === '-Inf' ? Number.NEGATIVE_INFINITY : Number(m[3]) });
  }
  return out;
}

/** The sum of `name`'s samples whose labels include `labels` (0 when none). */
export function value(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

/** This process's registry, as a scrape would see it. */
export const local = () => metricsRegistry.metrics();

/** GET a /metrics URL. */
/** GET a /metrics page; the API's needs a credential of role viewer or above (`headers`). */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await fetch(url, { headers });
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
  return r.text();
}
