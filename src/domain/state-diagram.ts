/**
 * The status operator's half of the component state machine, drawn from the decision table itself:
 * decide() is run over every kind of input it distinguishes (power state, desired and actual
 * artifacts, CFS record, last action and its age), and each distinct (phase it leads to, rule) is an
 * edge. The table reads levels, not the phase a node came from, so every phase leads to one choice
 * (the status tick) and the rules leave from there. A rule that changes in status-decision.ts changes
 * the diagram; docs/state-machine.md holds it and a test fails when it is stale (`npm run docs`).
 */
import type { ConfigComponent, ConfigurationStatus, PowerState } from './readings.ts';
import { decide, type Decision, type DecisionInput } from './status-decision.ts';
import { decideWithDeploy, DEPLOY_PHASES, type DeployView } from './deploy-decision.ts';
import { DEPLOY_STATES } from './deploy.ts';

export interface DecisionEdge {
  to: string;
  rule: Decision['rule'];
  why: string;
}

const PHASES = ['', 'powering_off', 'powering_on', 'configuring', ...DEPLOY_PHASES];
const NOW = new Date('2026-01-01T00:00:00Z');
const WAITS = { maxPowerOnWaitTime: 60, maxBootWaitTime: 600, deployHeartbeatTimeout: 300, powerUnknownTimeout: 60 };
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const UNKNOWN: PowerState = { state: 'unknown', cause: 'bmc_unreachable', error: 'no answer' };
/** A node's own record of unknown power: none yet, or held (U1) since long ago. */
const UNKNOWN_RUNS = [
  { status: 'stable', failureReason: '', powerUnknownSince: null },
  { status: 'on_hold', failureReason: 'bmc_unreachable', powerUnknownSince: ago(100_000) },
] as const;
const STATUSES: ConfigurationStatus[] = ['configured', 'pending', 'failed', 'unconfigured'];

/** Every combination of what the table looks at, one representative value each. */
function* inputs(): Generator<[DecisionInput, PowerState | undefined, ConfigComponent | undefined]> {
  for (const phase of PHASES) {
    for (const power of [undefined, 'on', 'off', 'unknown'] as const) {
      for (const desired of ['', 'k'] as const) {
        for (const actual of ['', 'k', 'other'] as const) {
          for (const [cfsConfig, wanted] of [
            [undefined, 'cfg'],
            ['cfg', 'cfg'],
            ['stale', 'cfg'],
            ['', ''],
          ] as const) {
            for (const status of STATUSES) {
              for (const [lastAction, at] of [
                ['', null],
                ['powering_on', ago(1)],
                ['powering_on', ago(100_000)],
                ['powering_off_gracefully', ago(1)],
              ] as const) {
                for (const run of power === 'unknown' ? UNKNOWN_RUNS : UNKNOWN_RUNS.slice(0, 1)) {
                  const c: DecisionInput = {
                    phase,
                    ...run,
                    lastAction,
                    lastActionFailed: false,
                    lastActionAt: at,
                    desiredKernel: desired,
                    desiredKernelParameters: desired,
                    desiredInitrd: desired,
                    desiredConfiguration: wanted,
                    actualKernel: actual,
                    actualKernelParameters: actual,
                    actualInitrd: actual,
                    error: '',
                  };
                  const p: PowerState | undefined = power === 'unknown' ? UNKNOWN : power && { state: power, error: '' };
                  const cfs =
                    cfsConfig === undefined
                      ? undefined
                      : { id: 'x', enabled: true, desiredConfig: cfsConfig, configurationStatus: status, errorCount: 0, tags: {} };
                  yield [c, p, cfs];
                }
              }
            }
          }
        }
      }
    }
  }
}

/** Where a decision leads: its phase, held while the power is unknown, or the end of the walk (disabled: done, or failed). */
function target(d: Decision): string {
  if (d.override === 'failed') return 'failed';
  if (d.disable) return 'done';
  if (d.override === 'on_hold') return 'power_unknown';
  return d.phase || 'on_hold';
}

/** A disk deploy in each state, fresh or gone quiet (domain/deploy-decision.ts rows D1-D7). */
function* deploys(): Generator<DeployView> {
  for (const state of DEPLOY_STATES) {
    if (state === 'pending' || state === 'active') continue; // the diskless table decides these
    for (const at of [ago(1), ago(100_000)]) yield { state, reason: '', message: '', heartbeatAt: at, stateAt: at };
  }
}

/** The distinct (target, rule, words) edges the decision table produces, in rule order. */
export function decisionEdges(): DecisionEdge[] {
  const edges = new Map<string, DecisionEdge>();
  const add = (d: Decision) => {
    const e = {
      to: target(d),
      rule: d.rule,
      why: d.why
        .replace(/"[^"]*"/g, '…')
        .replace(/\([^)]*\)/g, '(…)')
        .replace(/\|/g, '/'),
    };
    if (!edges.has(`${e.to} ${e.rule} ${e.why}`)) edges.set(`${e.to} ${e.rule} ${e.why}`, e);
  };
  for (const [c, power, cfs] of inputs()) {
    add(decide(c, power, cfs, WAITS, NOW));
    if (!power || !cfs || c.status !== 'stable' || cfs.configurationStatus !== 'configured' || power.state === 'unknown') continue;
    for (const d of deploys()) add(decideWithDeploy(c, d, power, cfs, WAITS, NOW));
  }
  return [...edges.values()].sort(
    (a, b) => a.rule.localeCompare(b.rule, 'en', { numeric: true }) || a.to.localeCompare(b.to) || a.why.localeCompare(b.why),
  );
}

/** Mermaid lines: every phase goes to the status tick, the tick to each target with its rules. */
export function decisionDiagramLines(): string[] {
  const byTarget = new Map<string, string[]>();
  for (const e of decisionEdges()) byTarget.set(e.to, [...(byTarget.get(e.to) ?? []), e.rule]);
  const lines = ['  state tick <<choice>>'];
  for (const phase of ['on_hold', 'powering_off', 'powering_on', 'configuring', ...DEPLOY_PHASES, 'power_unknown'])
    lines.push(`  ${phase} --> tick: status tick`);
  for (const [to, rules] of byTarget) lines.push(`  tick --> ${to}: ${[...new Set(rules)].join(', ')}`);
  return lines;
}

/** The rules table under the diagram: each rule, where it leads and the words it gives. */
export function ruleTable(): string {
  return ['| rule | leads to | why |', '|---|---|---|', ...decisionEdges().map((e) => `| ${e.rule} | ${e.to} | ${e.why} |`)].join('\n');
}
