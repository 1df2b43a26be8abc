/** The console map's placement of nodes (web/src/map/layout.ts): physical order, one cell each, stable. */
import { describe, expect, test } from 'vitest';
import { layoutNodes, TITLE_ROWS } from '../../web/src/map/layout.ts';

const cell = (l: ReturnType<typeof layoutNodes>, ids: string[], id: string) => ({ x: l.x[ids.indexOf(id)]!, y: l.y[ids.indexOf(id)]! });

function cabinet(cab: number): string[] {
  const ids: string[] = [];
  for (let c = 0; c < 8; c++)
    for (let s = 0; s < 8; s++) for (let b = 0; b < 2; b++) for (let n = 0; n < 2; n++) ids.push(`x${cab}c${c}s${s}b${b}n${n}`);
  return ids;
}

describe('map layout', () => {
  test("a cabinet: chassis are rows (highest on top), slots left to right, a slot's nodes side by side", () => {
    const ids = cabinet(1000);
    const l = layoutNodes(ids);
    expect(cell(l, ids, 'x1000c7s0b0n0')).toEqual({ x: 0, y: TITLE_ROWS });
    expect(cell(l, ids, 'x1000c0s0b0n0').y).toBeGreaterThan(cell(l, ids, 'x1000c1s0b0n0').y);
    expect(cell(l, ids, 'x1000c7s0b0n1')).toEqual({ x: 1, y: TITLE_ROWS });
    expect(cell(l, ids, 'x1000c7s0b1n1')).toEqual({ x: 3, y: TITLE_ROWS });
    expect(cell(l, ids, 'x1000c7s1b0n0')).toEqual({ x: 5, y: TITLE_ROWS }); // one free column between slots
    expect(l.labels).toEqual([{ text: 'x1000', x: 0, y: 0 }]);
  });

  test('every node has a cell of its own, inside the map, whatever the input order', () => {
    const ids = [...cabinet(1001), ...cabinet(1000), 'x3000c0s19b0n0', 'x3000c0s1b0n0', 'ncn-w001', 'uan01'];
    const shuffled = [...ids].reverse();
    const a = layoutNodes(ids);
    const b = layoutNodes(shuffled);
    const cells = new Set(ids.map((id) => `${cell(a, ids, id).x},${cell(a, ids, id).y}`));
    expect(cells.size).toBe(ids.length);
    for (const id of ids) {
      const p = cell(a, ids, id);
      expect(p.x).toBeGreaterThanOrEqual(0);
      expect(p.x).toBeLessThan(a.width);
      expect(p.y).toBeGreaterThanOrEqual(0);
      expect(p.y).toBeLessThan(a.height);
      expect(cell(b, shuffled, id)).toEqual(p);
    }
    expect(a.labels.map((t) => t.text)).toEqual(['x1000', 'x1001', 'x3000', 'other nodes']);
  });

  // How long the layout takes is a figure of the map bench (BENCHMARKS.md, the console map), not a pass mark here.
  test('100,000 nodes lay out one cell each, about as wide as tall', () => {
    const ids: string[] = [];
    for (let cab = 1000; ids.length < 100_000; cab++) ids.push(...cabinet(cab));
    ids.length = 100_000;
    const l = layoutNodes(ids);
    const cells = new Set<number>();
    for (let i = 0; i < ids.length; i++) cells.add(l.y[i]! * l.width + l.x[i]!);
    expect(cells.size).toBe(100_000);
    expect(l.width / l.height).toBeGreaterThan(0.5);
    expect(l.width / l.height).toBeLessThan(4);
  });
});
