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

/** A histogram's cumulative buckets (`name` without `_bucket`), summed over the series whose labels include `labels`. */
export function buckets(text: string, name: string, labels: Record<string, string> = {}): { le: number; count: number }[] {
  const by = new Map<number, number>();
  for (const s of samples(text, `${name}_bucket`)) {
    if (!Object.entries(labels).every(([k, v]) => s.labels[k] === v)) continue;
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    by.set(le, (by.get(le) ?? 0) + s.value);
  }
  return [...by].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/**
 * The q-quantile (0..1) of what a histogram observed between two scrapes (`before` may be empty), as
 * Prometheus's histogram_quantile estimates it: linear within the bucket; NaN when nothing was observed.
 */
export function histogramQuantile(q: number, after: { le: number; count: number }[], before: { le: number; count: number }[] = []): number {
  const b = after.map((x) => ({ le: x.le, count: x.count - (before.find((y) => y.le === x.le)?.count ?? 0) }));
  const total = b.at(-1)?.count ?? 0;
  if (!total) return Number.NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const x of b) {
    if (x.count >= rank) {
      if (x.le === Number.POSITIVE_INFINITY) return prevLe;
      return prevLe + ((x.le - prevLe) * (rank - prevCount)) / Math.max(x.count - prevCount, 1e-9);
    }
    prevLe = x.le;
    prevCount = x.count;
  }
  return prevLe;
}
