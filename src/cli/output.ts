/** Plain output for the client commands: aligned tables, YAML for one record, JSON for scripts. */
import YAML from 'yaml';

export interface Out {
  write(text: string): void;
}

/** Columns padded to the widest cell; `cols` are [header, value-of-row] pairs. */
export function table<T>(out: Out, rows: T[], cols: Array<[string, (r: T) => unknown]>): void {
  const cells = [cols.map(([h]) => h), ...rows.map((r) => cols.map(([, f]) => text(f(r))))];
  const widths = cols.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  for (const c of cells)
    out.write(
      `${c
        .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd()}\n`,
    );
}

export function yaml(out: Out, value: unknown): void {
  out.write(YAML.stringify(value, { lineWidth: 0 }));
}

export function json(out: Out, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.join(',');
  return String(v);
}
