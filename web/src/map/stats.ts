/**
 * Rendering figures of the map, kept for the browser bench (test/browser/map-bench.test.ts reads
 * `window.__bootorchMap`): when the first full map was drawn (ms since navigation start) and the time
 * each frame's drawing took.
 */
const FRAMES = 2000;
const CHANGES = 200_000;

class MapStats {
  firstFullMapMs: number | null = null;
  /** When each step to the first map happened (ms since navigation start): where the time goes. */
  readonly steps: Record<string, number> = {};
  step(name: string): void {
    this.steps[name] ??= Math.round(performance.now());
  }
  nodes = 0;
  /** Live events applied to the map so far. */
  liveEvents = 0;
  readonly drawMs: number[] = [];
  /** Client coordinates of a node's cell on the current map (set while a map is shown). */
  locate?: (id: string) => { x: number; y: number } | null;
  frame(ms: number): void {
    if (this.drawMs.length >= FRAMES) this.drawMs.shift();
    this.drawMs.push(ms);
  }
  /** Event times (ms since the epoch, when the change was written) applied to the store, not yet drawn. */
  private undrawn: number[] = [];
  /** Per live change drawn: ms from its write (the event's `at`) to the frame that showed it. */
  readonly changeMs: number[] = [];
  /** Per live change: ms from its write to its arrival in the browser (the API's and the network's part). */
  readonly receiveMs: number[] = [];
  received(ats: number[]): void {
    const now = Date.now();
    for (const at of ats) if (!Number.isNaN(at) && this.receiveMs.length < CHANGES) this.receiveMs.push(now - at);
  }
  applied(ats: number[]): void {
    this.liveEvents += ats.length;
    for (const at of ats) if (!Number.isNaN(at)) this.undrawn.push(at);
  }
  /** The map drew a frame: every change applied before it is on screen now. */
  drawn(): void {
    if (!this.undrawn.length) return;
    const now = Date.now();
    for (const at of this.undrawn) if (this.changeMs.length < CHANGES) this.changeMs.push(now - at);
    this.undrawn = [];
  }
  fullMap(nodes: number): void {
    this.nodes = nodes;
    this.firstFullMapMs ??= performance.now();
  }
}

export const mapStats = new MapStats();
(window as unknown as { __bootorchMap: MapStats }).__bootorchMap = mapStats;
