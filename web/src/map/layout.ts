/**
 * Where each node sits on the map, in layout units (one unit = one node cell), as the machine is
 * built: a cabinet (`x1000`) is a block, its chassis (`c0`..`c7`) are rows with the highest on top, as
 * in the rack, a chassis row holds its slots left to right, and a slot holds its nodes (`b0n0`,
 * `b0n1`, `b1n0`, `b1n1`) side by side. Blocks are packed in shelves, cabinets in name order. Names
 * that are not node xnames go into one grid block of their own, after the cabinets.
 *
 * Pure and deterministic: the same ids give the same places, whatever order they come in.
 */

const NODE_XNAME = /^x(\d+)c(\d+)s(\d+)b(\d+)n(\d+)$/;

export interface MapLayout {
  /** Per input index: the node's cell. */
  x: Int32Array;
  y: Int32Array;
  width: number;
  height: number;
  /** Block titles (cabinet names), with the top-left corner of their block. */
  labels: { text: string; x: number; y: number }[];
}

interface Parsed {
  i: number;
  chassis: number;
  slot: number;
  cell: number;
}

/** Gap between blocks, and the rows kept above a block for its title. */
export const BLOCK_GAP = 3;
export const TITLE_ROWS = 2;

export function layoutNodes(ids: readonly string[], maxWidth = 0): MapLayout {
  const cabinets = new Map<number, Parsed[]>();
  const others: number[] = [];
  ids.forEach((id, i) => {
    const m = NODE_XNAME.exec(id);
    if (!m) {
      others.push(i);
      return;
    }
    const [cab, chassis, slot, bmc, node] = m.slice(1).map(Number) as [number, number, number, number, number];
    const list = cabinets.get(cab) ?? [];
    list.push({ i, chassis, slot, cell: bmc * 2 + node });
    cabinets.set(cab, list);
  });

  const x = new Int32Array(ids.length);
  const y = new Int32Array(ids.length);
  const blocks: { title: string; w: number; h: number; place(ox: number, oy: number): void }[] = [];

  for (const cab of [...cabinets.keys()].sort((a, b) => a - b)) {
    const nodes = cabinets.get(cab)!;
    const chassis = [...new Set(nodes.map((n) => n.chassis))].sort((a, b) => b - a);
    const slots = [...new Set(nodes.map((n) => n.slot))].sort((a, b) => a - b);
    const cells = Math.max(...nodes.map((n) => n.cell)) + 1;
    const row = new Map(chassis.map((c, k) => [c, k]));
    const col = new Map(slots.map((s, k) => [s, k]));
    // A slot is `cells` wide with one unit between slots; a chassis row is one unit with one between rows.
    const w = slots.length * (cells + 1) - 1;
    const h = chassis.length * 2 - 1;
    blocks.push({
      title: `x${cab}`,
      w,
      h,
      place(ox, oy) {
        for (const n of nodes) {
          x[n.i] = ox + col.get(n.slot)! * (cells + 1) + n.cell;
          y[n.i] = oy + row.get(n.chassis)! * 2;
        }
      },
    });
  }
  if (others.length) {
    others.sort((a, b) => (ids[a]! < ids[b]! ? -1 : 1));
    const cols = Math.max(8, Math.ceil(Math.sqrt(others.length * 4)));
    blocks.push({
      title: 'other nodes',
      w: cols,
      h: Math.ceil(others.length / cols),
      place(ox, oy) {
        others.forEach((i, k) => {
          x[i] = ox + (k % cols);
          y[i] = oy + Math.floor(k / cols);
        });
      },
    });
  }

  // Shelf packing: about as wide as it is tall unless a width is given.
  const area = blocks.reduce((s, b) => s + (b.w + BLOCK_GAP) * (b.h + TITLE_ROWS + BLOCK_GAP), 0);
  const widest = Math.max(0, ...blocks.map((b) => b.w));
  const limit = Math.max(widest, maxWidth || Math.ceil(Math.sqrt(area * 1.6)));
  const labels: MapLayout['labels'] = [];
  let ox = 0;
  let oy = 0;
  let shelf = 0;
  let width = 0;
  for (const b of blocks) {
    if (ox > 0 && ox + b.w > limit) {
      ox = 0;
      oy += shelf + BLOCK_GAP;
      shelf = 0;
    }
    labels.push({ text: b.title, x: ox, y: oy });
    b.place(ox, oy + TITLE_ROWS);
    width = Math.max(width, ox + b.w);
    shelf = Math.max(shelf, b.h + TITLE_ROWS);
    ox += b.w + BLOCK_GAP;
  }
  return { x, y, width, height: blocks.length ? oy + shelf : 0, labels };
}
