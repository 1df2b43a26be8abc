/**
 * Node serial consoles (src/consoles/): what each node's console printed, in chunks, per node and boot
 * attempt. A boot attempt is the node's last power-on by bootorch (node_inventory.boot_set_at, taken in
 * the same statement as the write, so a chunk cannot land in the wrong attempt); bytes before any
 * power-on by bootorch belong to the epoch attempt. Attempts are kept to the millisecond, so the time
 * a client was shown names the attempt exactly. Bounded three ways, oldest dropped first:
 * `console_bytes_per_boot` per node and attempt, `console_boots_kept` attempts per node,
 * `console_retention_days` of age. The only module with SQL on this table.
 */
import { sql } from 'drizzle-orm';
import { bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';
import { arrayParam } from './sql.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const consoleChunks = pgTable(
  'console_chunks',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    /** The node (xname). */
    node: text('node').notNull(),
    /** The boot attempt: the node's power-on by bootorch the bytes came after (epoch when none). */
    attempt: ts('attempt').notNull(),
    /** When the capture wrote the chunk. */
    at: ts('at').notNull().defaultNow(),
    text: text('text').notNull(),
    bytes: integer('bytes').notNull(),
  },
  (t) => [index('console_chunks_node_attempt_idx').on(t.node, t.attempt, t.seq), index('console_chunks_at_idx').on(t.at)],
);

export interface ConsoleBounds {
  /** Bytes kept per node and attempt (the oldest chunks dropped beyond it). */
  bytesPerBoot: number;
  /** Attempts kept per node (the oldest dropped beyond it). */
  bootsKept: number;
  /** Chunks older than this many days are dropped. */
  retentionDays: number;
}

/** Nodes per statement of appendConsoles: their texts travel as three array parameters. */
export const CONSOLE_NODES_PER_STATEMENT = 1000;
/** Text per statement of appendConsoles, bytes (a statement also ends here before its node count). */
export const CONSOLE_BYTES_PER_STATEMENT = 32 * 2 ** 20;

/** The text as it is stored: at most its last `bytesPerBoot` bytes, without NUL (PostgreSQL's text refuses 0x00). */
function storable(text: string, bytesPerBoot: number): string {
  const t = text.includes('\0') ? text.replaceAll('\0', '') : text;
  return Buffer.byteLength(t) > bytesPerBoot ? Buffer.from(t).subarray(-bytesPerBoot).toString('utf8') : t;
}

/** Entries in order, in statements of at most CONSOLE_NODES_PER_STATEMENT nodes and CONSOLE_BYTES_PER_STATEMENT bytes. */
function statements(entries: ReadonlyArray<{ node: string; text: string }>): Array<Array<{ node: string; text: string; bytes: number }>> {
  const out: Array<Array<{ node: string; text: string; bytes: number }>> = [];
  let part: Array<{ node: string; text: string; bytes: number }> = [];
  let bytes = 0;
  for (const e of entries) {
    const b = Buffer.byteLength(e.text);
    if (part.length && (part.length >= CONSOLE_NODES_PER_STATEMENT || bytes + b > CONSOLE_BYTES_PER_STATEMENT)) {
      out.push(part);
      part = [];
      bytes = 0;
    }
    part.push({ ...e, bytes: b });
    bytes += b;
  }
  if (part.length) out.push(part);
  return out;
}

/**
 * Append what a node's console printed and trim its attempt to `bytesPerBoot`, oldest chunks first.
 * A chunk larger than the bound keeps its last `bytesPerBoot` bytes. A node unknown to the inventory
 * writes nothing (false).
 */
export async function appendConsole(db: Db, node: string, text: string, bytesPerBoot: number): Promise<boolean> {
  return (await appendConsoles(db, [{ node, text }], bytesPerBoot)).has(node);
}

/**
 * appendConsole for many nodes: two statements per CONSOLE_NODES_PER_STATEMENT nodes (insert, then
 * trim every attempt written to), so thousands of booting nodes cost a few statements a round rather
 * than two each. A node given twice keeps its texts in the order given. Returns the nodes written
 * (those the inventory knows).
 */
export async function appendConsoles(
  db: Db,
  entries: ReadonlyArray<{ node: string; text: string }>,
  bytesPerBoot: number,
): Promise<Set<string>> {
  const written = new Set<string>();
  const kept = entries.map((e) => ({ node: e.node, text: storable(e.text, bytesPerBoot) })).filter((e) => e.text);
  for (const part of statements(kept)) {
    const texts = part.map((e) => e.text);
    const r = await db.execute<{ node: string; attempt: Date | string }>(sql`
      with w as (
        insert into console_chunks (node, attempt, text, bytes)
        select n.id, date_trunc('milliseconds', coalesce(n.boot_set_at, 'epoch'::timestamptz)), v.text, v.bytes
        from unnest(${arrayParam(
          part.map((e) => e.node),
          'text',
        )}, ${arrayParam(texts, 'text')}, ${arrayParam(
          part.map((e) => e.bytes),
          'int',
        )}) with ordinality as v(node, text, bytes, ord)
        join node_inventory n on n.id = v.node
        order by v.ord
        returning node, attempt
      ) select distinct node, attempt from w`);
    if (!r.rows.length) continue;
    for (const row of r.rows) written.add(row.node);
    const attempts = r.rows.map((x) => (typeof x.attempt === 'string' ? x.attempt : new Date(x.attempt).toISOString()));
    await db.execute(sql`
      delete from console_chunks where seq in (
        select seq from (
          select c.seq, sum(c.bytes) over (partition by c.node, c.attempt order by c.seq desc) as kept
          from console_chunks c
          join unnest(${arrayParam(
            r.rows.map((x) => x.node),
            'text',
          )}, ${arrayParam(attempts, 'timestamptz')}) as t(node, attempt)
            on c.node = t.node and c.attempt = t.attempt
        ) x where kept > ${bytesPerBoot})`);
  }
  return written;
}

/** Drop attempts beyond the newest `bootsKept` per node and chunks older than `retentionDays`. Returns the rows dropped. */
export async function pruneConsoles(db: Db, b: Pick<ConsoleBounds, 'bootsKept' | 'retentionDays'>): Promise<number> {
  const old = await db.execute(sql`delete from console_chunks where at < now() - make_interval(days => ${b.retentionDays})`);
  const extra = await db.execute(sql`
    delete from console_chunks c using (
      select node, attempt from (
        select node, attempt, dense_rank() over (partition by node order by attempt desc) as r
        from (select distinct node, attempt from console_chunks) a
      ) ranked where r > ${b.bootsKept}
    ) d where c.node = d.node and c.attempt = d.attempt`);
  return (old.rowCount ?? 0) + (extra.rowCount ?? 0);
}

export interface ConsoleAttempt {
  attempt: Date;
  bytes: number;
  first: Date;
  last: Date;
}

/** A node's kept attempts, newest first. */
export async function consoleAttempts(db: Db, node: string): Promise<ConsoleAttempt[]> {
  const r = await db.execute<{ attempt: Date; bytes: string; first: Date; last: Date }>(sql`
    select attempt, sum(bytes)::bigint as bytes, min(at) as first, max(at) as last
    from console_chunks where node = ${node} group by attempt order by attempt desc`);
  return r.rows.map((x) => ({ attempt: new Date(x.attempt), bytes: Number(x.bytes), first: new Date(x.first), last: new Date(x.last) }));
}

export interface ConsoleText {
  attempt: Date;
  text: string;
  /** The last chunk's seq: `after` of the next read for only what came since. */
  cursor: number;
}

/**
 * One attempt's text (the newest when `attempt` is not given), in order; with `after`, only chunks
 * written after that cursor. Null when the node has none.
 */
export async function consoleText(db: Db, node: string, o: { attempt?: Date; after?: number } = {}): Promise<ConsoleText | null> {
  const attempt =
    o.attempt ??
    (
      await db.execute<{ attempt: Date }>(
        sql`select attempt from console_chunks where node = ${node} order by attempt desc, seq desc limit 1`,
      )
    ).rows[0]?.attempt;
  if (!attempt) return null;
  const r = await db.execute<{ seq: string; text: string }>(sql`
    select seq, text from console_chunks where node = ${node} and attempt = ${attempt} and seq > ${o.after ?? 0}
    order by seq`);
  const cursor = r.rows.length ? Number(r.rows[r.rows.length - 1]!.seq) : (o.after ?? 0);
  return { attempt: new Date(attempt), text: r.rows.map((x) => x.text).join(''), cursor };
}

/**
 * The end of each node's newest attempt, for many nodes in one statement: its newest chunks (at most
 * 256) up to `maxBytes` in all, the chunk that crosses it included, cut to their last `maxBytes`
 * characters in the database: no more than that per node leaves it, and no more than 256 rows per node
 * are read. `cut` when older text of the attempt was left out (the answer may then start inside a
 * line). Nodes with nothing kept are absent.
 */
export async function consoleEnds(
  db: Db,
  nodes: readonly string[],
  maxBytes: number,
): Promise<Map<string, { text: string; cut: boolean }>> {
  if (!nodes.length) return new Map();
  const r = await db.execute<{ node: string; text: string; cut: boolean }>(sql`
    select g.node, right(g.text, ${maxBytes}) as text,
      g.total > ${maxBytes} or exists (
        select 1 from console_chunks o where o.node = g.node and o.attempt = g.attempt and o.seq < g.first
      ) as cut
    from (
      select n.node, a.attempt, string_agg(w.text, '' order by w.seq) as text, sum(w.bytes) as total, min(w.seq) as first
      from unnest(${sql.param(nodes)}::text[]) as n(node)
      cross join lateral (
        select attempt from console_chunks where node = n.node order by attempt desc, seq desc limit 1
      ) a
      cross join lateral (
        select seq, text, bytes from (
          select seq, text, bytes, sum(bytes) over (order by seq desc) as upto
          from (
            select seq, text, bytes from console_chunks
            where node = n.node and attempt = a.attempt order by seq desc limit 256
          ) last
        ) x where upto - bytes < ${maxBytes}
      ) w
      group by n.node, a.attempt
    ) g`);
  return new Map(r.rows.map((x) => [x.node, { text: x.text, cut: x.cut }]));
}
