/**
 * Where `bootorch sim`'s nodes find their reporter credentials, the way a real node finds its own on
 * disk: read at report time, so tokens minted (or rotated) after the simulator started are used at
 * the next report without a restart.
 *
 * - a token: every node reports with it (an operator token, development only);
 * - a file: one token for every node, or a JSON object `{ "<xname>": "<token>", ... }` (re-read when
 *   its modification time changes, looked at every 100 ms at most);
 * - a directory: one file per node named by its xname, holding its token (what
 *   `bootorch token nodes --out DIR` writes).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface ReportTokenOptions {
  token?: string;
  file?: string;
  dir?: string;
  /** The clock a token file's checks are spaced on, ms (default performance.now). */
  now?: () => number;
}

export type ReportTokenSource = string | ((xname: string) => string | undefined) | undefined;

/** A node's xname as a file name: only what an xname can hold, so no path can escape the directory. */
const SAFE = /^[a-z0-9]+$/i;

export function reportTokenSource(o: ReportTokenOptions): ReportTokenSource {
  const given = [o.token && '--report-token', o.file && '--report-token-file', o.dir && '--report-tokens-dir'].filter(Boolean);
  if (given.length > 1) throw new Error(`give one of ${given.join(', ')}, not several`);
  if (o.token) return o.token.trim();
  if (o.file) return fileSource(o.file, o.now ?? (() => performance.now()));
  if (o.dir) return dirSource(o.dir);
  return undefined;
}

/** How often a token file's modification time is looked at: 10,000 nodes reporting at once cost 10,000 stat calls. */
const STAT_EVERY_MS = 100;

function fileSource(file: string, clock: () => number): (xname: string) => string | undefined {
  let mtime = -1;
  let statAt = -Infinity;
  let current: string | Map<string, string> | undefined;
  const load = () => {
    const now = clock();
    if (now - statAt < STAT_EVERY_MS) return;
    statAt = now;
    const m = statSync(file).mtimeMs;
    if (m === mtime) return;
    const text = readFileSync(file, 'utf8').trim();
    if (text.startsWith('{')) {
      const map = JSON.parse(text) as Record<string, unknown>;
      current = new Map(
        Object.entries(map)
          .filter((e): e is [string, string] => typeof e[1] === 'string')
          .map(([k, v]) => [k, v.trim()]),
      );
    } else {
      current = text || undefined;
    }
    mtime = m;
  };
  // Fail at start on an unreadable or malformed file; later problems leave the last good contents.
  load();
  return (xname) => {
    try {
      load();
    } catch {
      // being rewritten, or gone: keep what was read last
    }
    return typeof current === 'string' ? current : current?.get(xname);
  };
}

function dirSource(dir: string): (xname: string) => string | undefined {
  // The directory may not exist yet: tokens are often minted after the simulator started.
  return (xname) => {
    if (!SAFE.test(xname)) return undefined;
    try {
      return readFileSync(path.join(dir, xname), 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  };
}
