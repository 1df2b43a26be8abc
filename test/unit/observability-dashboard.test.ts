/**
 * The Grafana dashboard and the alert rules reference only series bootorch exports: every metric
 * name in their PromQL is registered by some process (prom-client's defaults included), and every
 * label a selector matches on is one of that metric's labels (or one Prometheus adds).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../helpers/processes.ts';
import { metricsRegistry, startProcessMetrics } from '../../src/observability/metrics.ts';
// Every module that registers series: the engine's and the ports' (metrics.ts), the state gauges,
// the live gauges, the API's.
import '../../src/observability/collectors.ts';
import '../../src/observability/live.ts';
import '../../src/api/metrics.ts';

const ADDED_BY_PROMETHEUS = ['instance', 'job'];
const OURS = /\b(?:bootorch|process|nodejs)_[a-zA-Z0-9_]+/g;

async function exported(): Promise<Map<string, string[]>> {
  startProcessMetrics('dev');
  const out = new Map<string, string[]>();
  for (const m of await metricsRegistry.getMetricsAsJSON()) {
    const labels = [...((metricsRegistry.getSingleMetric(m.name) as unknown as { labelNames?: string[] })?.labelNames ?? []), 'role'];
    const type = String(m.type);
    const names =
      type === 'histogram'
        ? ['_bucket', '_sum', '_count'].map((s) => m.name + s)
        : type === 'summary'
          ? [m.name, `${m.name}_sum`, `${m.name}_count`]
          : [m.name];
    for (const n of names) out.set(n, type === 'histogram' && n.endsWith('_bucket') ? [...labels, 'le'] : labels);
  }
  return out;
}

/** Metric names and the labels each selector matches on, in one PromQL expression. */
function references(expr: string): { name: string; labels: string[] }[] {
  return [...expr.matchAll(OURS)].map((m) => {
    const rest = expr.slice(m.index! + m[0].length);
    const selector = rest.startsWith('{') ? rest.slice(1, rest.indexOf('}')) : '';
    return { name: m[0], labels: [...selector.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!) };
  });
}

const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'observability/grafana/bootorch.json'), 'utf8'));
const dashboardExprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
const rules = parse(readFileSync(path.join(ROOT, 'observability/prometheus/alerts.yml'), 'utf8'));
const ruleExprs: string[] = rules.groups.flatMap((g: { rules: { expr: string }[] }) => g.rules.map((r) => r.expr));

describe.each([
  ['dashboard', dashboardExprs],
  ['alert rules', ruleExprs],
])('the %s', (_what, exprs) => {
  it('reference only exported series, by labels they carry', async () => {
    const known = await exported();
    expect(exprs.length).toBeGreaterThan(4);
    const problems: string[] = [];
    let refs = 0;
    for (const expr of exprs) {
      for (const r of references(expr)) {
        refs++;
        const labels = known.get(r.name);
        if (!labels) {
          problems.push(`${r.name} is not exported (in ${expr.trim()})`);
          continue;
        }
        for (const l of r.labels) if (!labels.includes(l) && !ADDED_BY_PROMETHEUS.includes(l)) problems.push(`${r.name} has no label ${l}`);
      }
    }
    expect(problems).toEqual([]);
    expect(refs).toBeGreaterThanOrEqual(exprs.length);
  });
});

describe('the check itself', () => {
  it('catches a misspelt series and a label the series lacks', async () => {
    const known = await exported();
    const bad = references('rate(bootorch_outside_call_total[5m]) + bootorch_components{xname="x1"}');
    expect(bad.map((r) => r.name)).toEqual(['bootorch_outside_call_total', 'bootorch_components']);
    expect(known.has(bad[0]!.name)).toBe(false);
    expect(known.get('bootorch_components')).not.toContain('xname');
  });

  it('the dashboard covers machine state, sessions, throughput, errors by service and queue health', () => {
    const rows = dashboard.panels.filter((p: { type: string }) => p.type === 'row').map((p: { title: string }) => p.title);
    expect(rows).toEqual(expect.arrayContaining(['Machine state', 'Session progress', 'Throughput', 'Errors by service', 'Queue health']));
  });
});

describe("the alert rules' unit tests (alerts.test.yml, run by promtool test rules in CI)", () => {
  const tests = parse(readFileSync(path.join(ROOT, 'observability/prometheus/alerts.test.yml'), 'utf8')) as {
    rule_files: string[];
    tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
  };
  const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
  const names: string[] = rules.groups.flatMap((g: { rules: { alert: string }[] }) => g.rules.map((r) => r.alert));

  it('load alerts.yml itself', () => {
    expect(tests.rule_files).toEqual(['alerts.yml']);
  });

  it.each(names)('%s has a case where it fires and one where it must not', (name) => {
    const mine = cases.filter((c) => c.alertname === name);
    expect(mine.some((c) => c.exp_alerts.length > 0)).toBe(true);
    expect(mine.some((c) => c.exp_alerts.length === 0)).toBe(true);
  });
});
