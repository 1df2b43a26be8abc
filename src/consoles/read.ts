/**
 * Reading a node's kept console, one way for GraphQL, the REST extension, the CLI and explain: who may
 * (a console can hold secrets: operators and admins; viewers only with the option console_viewers;
 * never a tenant's credential or a node's, since consoles are site-wide), and which part (an attempt,
 * what came after a cursor, the last lines, the lines matching a search).
 */
import type { AuthzResult } from '../auth/authorize.ts';
import { isAuthFailure, roleAtLeast, type AuthFailure, type Principal } from '../auth/principal.ts';
import type { Db } from '../db/client.ts';
import { consoleAttempts, consoleEnds, consoleText, type ConsoleAttempt } from '../db/consoles.ts';
import type { Options } from '../domain/options.ts';

/** May this caller read node consoles? */
export function consoleAccess(p: Principal | AuthFailure | null | undefined, options: Pick<Options, 'console_viewers'>): AuthzResult {
  if (!p || isAuthFailure(p)) return { ok: false, code: 'UNAUTHENTICATED', reason: 'no credential' };
  if (p.tenant) return { ok: false, code: 'FORBIDDEN', reason: "node consoles are site-wide: a tenant's credential does not read them" };
  if (roleAtLeast(p.role, 'operator')) return { ok: true };
  if (p.role === 'viewer' && options.console_viewers) return { ok: true };
  return {
    ok: false,
    code: 'FORBIDDEN',
    reason:
      p.role === 'viewer'
        ? 'node consoles can hold secrets: operators and admins read them, viewers only while the option console_viewers is on (an admin sets it: patchOptions consoleViewers: true)'
        : `role ${p.role} does not read node consoles`,
  };
}

export interface ConsoleQuery {
  /** The attempt (its power-on time); default the newest. */
  attempt?: Date;
  /** Only what was written after this cursor (a `cursor` of an earlier read). */
  after?: number;
  /** Only the last this many lines. */
  lines?: number;
  /** Only the lines containing this text (case-insensitive), before `lines` is applied. */
  search?: string;
}

export interface NodeConsole {
  componentId: string;
  attempt: Date;
  text: string;
  cursor: number;
  attempts: ConsoleAttempt[];
}

/** Null when nothing of the node's console is kept (or not for that attempt). */
export async function readConsole(db: Db, node: string, q: ConsoleQuery = {}): Promise<NodeConsole | null> {
  const t = await consoleText(db, node, { attempt: q.attempt, after: q.after });
  if (!t) return null;
  let text = t.text;
  if (q.search !== undefined || q.lines !== undefined) {
    let lines = splitLines(text);
    if (q.search) {
      const needle = q.search.toLowerCase();
      lines = lines.filter((l) => l.toLowerCase().includes(needle));
    }
    if (q.lines !== undefined) lines = lines.slice(-q.lines);
    text = lines.map((l) => `${l}\n`).join('');
  }
  return { componentId: node, attempt: t.attempt, text, cursor: t.cursor, attempts: await consoleAttempts(db, node) };
}

/**
 * The last `n` lines of each node's newest attempt, read in one statement (a failed node's console in
 * a component list, explain's tail): from at most the last 16 KiB of each; a node with none kept gets [].
 */
export async function consoleTails(db: Db, nodes: readonly string[], n: number): Promise<Map<string, string[]>> {
  const ends = await consoleEnds(db, nodes, 16_384);
  return new Map(
    nodes.map((node) => {
      const end = ends.get(node);
      if (end === undefined) return [node, []];
      const lines = splitLines(end.text);
      // A cut end starts inside a line: that part is not shown.
      if (end.cut && !end.text.startsWith('\n')) lines.shift();
      return [node, lines.slice(-n)];
    }),
  );
}

/** The last `n` lines of the node's newest attempt (explain's console tail); [] when none kept. */
export async function consoleTail(db: Db, node: string, n = 20): Promise<string[]> {
  return (await consoleTails(db, [node], n)).get(node) ?? [];
}

/** Lines without their CR/LF, empty ones and a trailing partial line's terminator dropped. */
function splitLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/\r+$/, '').replace(/\r/g, ''))
    .filter((l) => l.length > 0);
}
