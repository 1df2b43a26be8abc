/**
 * Deterministic randomness for the simulated cluster. Everything random in the world (which blades
 * are ARM, fault draws, UUIDs) comes from here, so a seed reproduces a run. Draws that depend on a
 * node use `hashDraw`, keyed by (seed, what, node, n), so they do not depend on the order in which
 * timers happen to fire.
 */

/** mulberry32: tiny, fast, good enough for simulation (not for secrets). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a over a string, 32 bits. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A draw in [0, 1) that depends only on its key parts. */
export function hashDraw(...parts: (string | number)[]): number {
  return mulberry32(fnv1a(parts.join('\u0000')))();
}

/** A version-4-shaped UUID from a PRNG (deterministic per seed and call order). */
export function uuidFrom(next: () => number): string {
  const hex: string[] = [];
  for (let i = 0; i < 16; i++)
    hex.push(
      Math.floor(next() * 256)
        .toString(16)
        .padStart(2, '0'),
    );
  hex[6] = '4' + hex[6]!.slice(1);
  hex[8] = ((parseInt(hex[8]!, 16) & 0x3f) | 0x80).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
