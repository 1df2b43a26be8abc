/**
 * The top frames of a V8 CPU profile (node --cpu-prof): self time by function, and inclusive time by
 * package (the first node_modules package or src/ file on the stack below the frame). Used to quote
 * the API's profile under reporter load in BENCHMARKS.md: `npx tsx scripts/cpu-profile-top.ts FILE [N]`.
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, nArg] = process.argv.slice(2);
const prof = JSON.parse(fs.readFileSync(file!, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
prof.samples.forEach((s, i) => self.set(s, (self.get(s) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const where = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  const s = /\/(src\/.+)$/.exec(url);
  return s ? s[1]! : url.replace(/^node:/, '') || '(native)';
};
const fnSelf = new Map<string, number>();
const pkgIncl = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const key = `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  fnSelf.set(key, (fnSelf.get(key) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const w = where(byId.get(cur)!.callFrame.url);
    if (!seen.has(w)) {
      seen.add(w);
      pkgIncl.set(w, (pkgIncl.get(w) ?? 0) + us);
    }
  }
}
const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
const n = Number(nArg ?? 15);
process.stdout.write(
  `${(total / 1e6).toFixed(1)} s sampled\n\nself time by function:\n${top(fnSelf, n)}\n\ninclusive time by package / file:\n${top(pkgIncl, n)}\n`,
);
