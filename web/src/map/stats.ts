/**
 * Rendering figures of the map, kept for the browser bench (test/browser/map-bench.test.ts reads
 * `window.__bootorchMap`): when the first full map was drawn (ms since navigation start) and the time
 * each frame's drawing took.
 */
const FRAMES = 2000;

class MapStats {
  firstFullMapMs: number | null = null;
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
  fullMap(nodes: number): void {
    this.nodes = nodes;
    this.firstFullMapMs ??= performance.now();
  }
}

export const mapStats = new MapStats();
(window as unknown as { __bootorchMap: MapStats }).__bootorchMap = mapStats;
