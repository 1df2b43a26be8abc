/**
 * What `--watch` shows. Human: a progress bar (cli-progress) with counts per phase, a line for each
 * node that fails as it happens, and a summary. Nodes held up by a failing outside service (the
 * progress's `blocked` groups: domain/blocked.ts) are no failures and are shown apart: `blocked N`
 * beside `failed N` on the bar, a line when a service starts blocking nodes (which, since when, its
 * error, what bootorch does about it) and one when it no longer does. Not on a terminal the bar becomes
 * one line per update. JSON (`--json`): newline-delimited objects `{type: "event" | "progress" |
 * "summary", ...}`; a progress object carries its `blocked` groups.
 */
import cliProgress from 'cli-progress';
import { clockTime } from '../domain/blocked.ts';

export interface WatchEvent {
  cursor: string;
  at: string;
  componentId: string;
  kind: string;
  actor: string;
  fromPhase: string | null;
  toPhase: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  action: string | null;
  error: string | null;
  reason: string | null;
}

export interface Group {
  key: string;
  count: number;
  ids: string[];
  list: string;
}

/** Nodes of the session waiting on one failing outside service (the API's BlockedGroup). */
export interface BlockedGroup {
  /** PCS, HSM, BSS, CFS, IMS or BMC. */
  service: string;
  /** service_unavailable, or the BMC's cause (bmc_unreachable, ...). */
  reason: string;
  /** When the first of them started waiting on it (ISO), when known. */
  since: string | null;
  count: number;
  ids: string[];
  error: string;
}

export interface Progress {
  name: string;
  status: 'PENDING' | 'RUNNING' | 'COMPLETE';
  managedComponentsCount: number;
  percentSuccessful: number;
  percentFailed: number;
  percentStaged: number;
  phases: {
    percentComplete: number;
    percentPoweringOn: number;
    percentPoweringOff: number;
    percentConfiguring: number;
    /** Read as 0 when absent. */
    percentDeploying?: number;
  };
  errorSummary: Group[];
  failureReasons: Group[];
  /** Read as none when absent. */
  blocked?: BlockedGroup[];
  timing: { startTime: string; endTime: string | null; duration: string };
  paused: boolean;
  pauseReason: string | null;
}

export interface Summary {
  session: string;
  /** Why setup failed, when it did. */
  error: string | null;
  succeeded: number;
  failed: number;
  staged: number;
  total: number;
  duration: string;
  failureReasons: Group[];
  errorSummary: Group[];
}

export interface Display {
  event(e: WatchEvent): void;
  progress(p: Progress): void;
  note(text: string): void;
  summary(s: Summary): void;
}

/** Counts from the status's percentages of the managed components. */
export function counts(p: Progress) {
  const n = p.managedComponentsCount;
  const of = (pct: number) => Math.round((pct * n) / 100);
  return {
    total: n,
    done: of(p.phases.percentComplete),
    succeeded: of(p.percentSuccessful),
    failed: of(p.percentFailed),
    staged: of(p.percentStaged),
    poweringOff: of(p.phases.percentPoweringOff),
    poweringOn: of(p.phases.percentPoweringOn),
    configuring: of(p.phases.percentConfiguring),
    deploying: of(p.phases.percentDeploying ?? 0),
  };
}

const blockedKey = (g: BlockedGroup) => `${g.service}/${g.reason}`;
/** "PCS failing since 14:02:03 UTC", "BMC not answering (bmc_unreachable)", "bootorch out of open files or ports (local_resources)" */
const blockerText = (g: BlockedGroup) =>
  `${g.service === 'BMC' ? `BMC not answering (${g.reason})` : g.service === 'bootorch' ? `bootorch out of open files or ports (${g.reason})` : `${g.service} failing`}${g.since ? ` since ${clockTime(new Date(g.since))}` : ''}`;

/** "blocked 25 by PCS since 14:02:03 UTC", or '' when no node is blocked. */
function blockedText(p: Progress): string {
  const groups = p.blocked ?? [];
  if (!groups.length) return '';
  const n = groups.reduce((sum, g) => sum + g.count, 0);
  const by = [...new Map(groups.map((g) => [g.service, g])).values()]
    .map((g) => `${g.service}${g.service !== 'BMC' && g.since ? ` since ${clockTime(new Date(g.since))}` : ''}`)
    .join(', ');
  return ` | blocked ${n} by ${by} (not failed)`;
}

function phasesText(p: Progress): string {
  const c = counts(p);
  const parts = [`powering off ${c.poweringOff}`, `powering on ${c.poweringOn}`, `configuring ${c.configuring}`];
  if (c.deploying) parts.push(`deploying ${c.deploying}`);
  if (c.staged) parts.push(`staged ${c.staged}`);
  return `${parts.join(' · ')} | failed ${c.failed}${blockedText(p)}${p.paused ? ` | PAUSED: ${p.pauseReason ?? ''}` : ''}`;
}

/** The line printed when a service starts holding up nodes of the session. */
export function blockedLine(g: BlockedGroup): string {
  const ids = `${g.ids.join(', ')}${g.count > g.ids.length ? ', …' : ''}`;
  const next =
    g.service === 'BMC'
      ? 'bootorch re-reads their power on each pass; they fail with the cause if it stays unknown past power_unknown_timeout'
      : g.service === 'bootorch'
        ? "the BMCs were not asked: raise the worker's open-file limit (LimitNOFILE) or lower BOOTORCH_BMC_KEEP_CONNECTIONS; they fail with the cause if it stays unknown past power_unknown_timeout"
        : `bootorch asks ${g.service} again on each pass and goes on as soon as it answers; check ${g.service}`;
  return `◷ blocked, not failed: ${g.count} node${g.count === 1 ? '' : 's'} wait for ${blockerText(g)}: ${ids}${g.error ? ` — ${g.error}` : ''}\n  ${next}`;
}

export function summaryText(s: Summary): string {
  const lines = [
    `Session ${s.session} complete in ${s.duration}: ${s.total} node${s.total === 1 ? '' : 's'}, ${s.succeeded} succeeded, ${s.failed} failed${s.staged ? `, ${s.staged} staged` : ''}`,
  ];
  if (s.error) lines.push(`  session error: ${s.error}`);
  if (s.failureReasons.length) {
    lines.push('  failed, by reason:');
    for (const g of s.failureReasons) lines.push(`    ${g.key} (${g.count}): ${g.list}`);
  }
  if (s.errorSummary.length) {
    lines.push('  errors:');
    for (const g of s.errorSummary) lines.push(`    ${g.key} (${g.count}): ${g.list}`);
  }
  return `${lines.join('\n')}\n`;
}

const failureLine = (e: WatchEvent) => `✗ ${e.componentId} failed${e.reason ? `: ${e.reason}` : ''}${e.error ? ` — ${e.error}` : ''}`;

export class JsonDisplay implements Display {
  constructor(private readonly out: NodeJS.WritableStream) {}
  private line(o: object) {
    this.out.write(`${JSON.stringify(o)}\n`);
  }
  event(e: WatchEvent) {
    this.line({ type: 'event', ...e });
  }
  progress(p: Progress) {
    this.line({ type: 'progress', ...p });
  }
  note(text: string) {
    this.line({ type: 'note', text });
  }
  summary(s: Summary) {
    this.line({ type: 'summary', ...s });
  }
}

/** Human output; `tty` picks the live bar, else one plain line per update. */
export class HumanDisplay implements Display {
  private readonly multi?: cliProgress.MultiBar;
  private bar?: cliProgress.SingleBar;
  private readonly failed = new Set<string>();
  /** The blocked groups of the last progress, by service and reason. */
  private blocked = new Map<string, BlockedGroup>();
  private lastLine = '';

  constructor(
    private readonly name: string,
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    tty: boolean,
  ) {
    if (tty) {
      this.multi = new cliProgress.MultiBar(
        {
          stream: out,
          format: `${name} {bar} {percentage}% | {value}/{total} done | {phases} | {duration_formatted}`,
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          forceRedraw: true,
        },
        cliProgress.Presets.shades_classic,
      );
    }
  }

  private print(text: string) {
    if (this.multi) this.multi.log(`${text}\n`);
    else this.out.write(`${text}\n`);
  }

  event(e: WatchEvent) {
    if ((e.kind === 'failed' || e.toStatus === 'FAILED') && !this.failed.has(e.componentId)) {
      this.failed.add(e.componentId);
      this.print(failureLine(e));
    }
  }

  progress(p: Progress) {
    const c = counts(p);
    this.blockedChanges(p.blocked ?? []);
    if (this.multi) {
      this.bar ??= this.multi.create(Math.max(c.total, 1), 0, { phases: 'waiting for setup' });
      this.bar.setTotal(Math.max(c.total, 1));
      this.bar.update(c.done, { phases: p.status === 'PENDING' ? 'waiting for setup' : phasesText(p) });
      return;
    }
    const line =
      p.status === 'PENDING'
        ? `${this.name}: pending (waiting for setup)`
        : `${this.name}: ${p.phases.percentComplete}% complete (${c.done}/${c.total}) | ${phasesText(p)} | ${p.timing.duration}`;
    if (line !== this.lastLine) this.out.write(`${line}\n`);
    this.lastLine = line;
  }

  /** A line for each service that starts blocking nodes, and one when it stops (its nodes went on or failed). */
  private blockedChanges(groups: BlockedGroup[]) {
    const now = new Map(groups.map((g) => [blockedKey(g), g]));
    for (const [k, g] of now) if (!this.blocked.has(k)) this.print(blockedLine(g));
    for (const [k, g] of this.blocked)
      if (!now.has(k)) this.print(`▷ no node waits for ${g.service === 'BMC' ? `BMC (${g.reason})` : g.service} any more`);
    this.blocked = now;
  }

  note(text: string) {
    this.print(text);
  }

  summary(s: Summary) {
    this.multi?.stop();
    this.out.write(summaryText(s));
  }
}
