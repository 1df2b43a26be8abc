/**
 * The console's copy of every component's map state, in flat arrays (100,000 nodes are a few MB, and
 * a live event touches one slot). Loaded from `components` pages, then kept current by the live
 * module (web/src/live). Listeners hear which indexes changed, so the map redraws only those pixels.
 */
import { mapStatus, statusIndex } from './colors.ts';

/** The API's machineMap: columns in id order, each value an index into its dictionary. */
export interface MapColumns {
  ids: string[];
  status: number[];
  statuses: string[];
  phase: number[];
  phases: string[];
  session: number[];
  sessions: string[];
  failureReason: number[];
  failureReasons: string[];
}

/** What a live event says about a node (absent fields: unchanged). */
export interface NodeChange {
  componentId: string;
  session?: string | null;
  toStatus?: string | null;
  toPhase?: string | null;
  reason?: string | null;
  kind?: string;
}

type Listener = (changed: number[] | 'all') => void;

export class NodeStore {
  ids: string[] = [];
  readonly index = new Map<string, number>();
  /** Index into STATUSES of what the map shows (colors.ts mapStatus). */
  status = new Uint8Array(0);
  /** The computed status as the API says it (the shown one also depends on the phase). */
  apiStatus: string[] = [];
  phase: string[] = [];
  session: string[] = [];
  reason: string[] = [];
  /** Changed with every change, for memoised views (counts, filter lists). */
  version = 0;
  /** A snapshot has been loaded (the machine may still have no node). */
  loaded = false;
  private listeners = new Set<Listener>();

  /** Replace everything with a full snapshot (the API sorts the ids, which keeps the layout stable). */
  load(m: MapColumns): void {
    const n = m.ids.length;
    this.ids = m.ids;
    this.index.clear();
    for (let i = 0; i < n; i++) this.index.set(m.ids[i]!, i);
    // Each dictionary entry's map status once, then one lookup per node.
    const shown = m.statuses.map((s) => m.phases.map((p) => statusIndex(mapStatus(s, p))));
    this.status = new Uint8Array(n);
    this.apiStatus = new Array(n);
    this.phase = new Array(n);
    this.session = new Array(n);
    this.reason = new Array(n);
    for (let i = 0; i < n; i++) {
      const s = m.status[i]!;
      const p = m.phase[i]!;
      this.apiStatus[i] = m.statuses[s]!;
      this.phase[i] = m.phases[p]!;
      this.status[i] = shown[s]![p]!;
      this.session[i] = m.sessions[m.session[i]!]!;
      this.reason[i] = m.failureReasons[m.failureReason[i]!]!;
    }
    this.loaded = true;
    this.version++;
    this.emit('all');
  }

  /** Apply live changes in log order; unknown ids (a node discovered later) are ignored until the next load. */
  apply(changes: NodeChange[]): void {
    const changed: number[] = [];
    for (const c of changes) {
      const i = this.index.get(c.componentId);
      if (i === undefined) continue;
      if (c.toStatus) this.apiStatus[i] = c.toStatus;
      if (c.toPhase) this.phase[i] = c.toPhase;
      if (c.toStatus || c.toPhase) this.status[i] = statusIndex(mapStatus(this.apiStatus[i]!, this.phase[i]!));
      if (c.session) this.session[i] = c.session;
      if (c.reason) this.reason[i] = c.reason;
      else if (c.toStatus && c.toStatus !== 'FAILED') this.reason[i] = '';
      changed.push(i);
    }
    if (!changed.length) return;
    this.version++;
    this.emit(changed);
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(changed: number[] | 'all'): void {
    for (const l of this.listeners) l(changed);
  }

  /** Nodes per status index. */
  counts(): number[] {
    const out = new Array<number>(16).fill(0);
    for (const s of this.status) out[s]!++;
    return out;
  }
}
