/** The options row (id 1). Reads fill in defaults and drop unknown keys (domain/options.ts), as BOS. */
import { eq, sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { options as optionsTable } from './schema.ts';
import { readOptions, type Options } from '../domain/options.ts';

export async function getOptions(db: Db, opts: { forUpdate?: boolean } = {}): Promise<Options> {
  const q = db.select({ data: optionsTable.data }).from(optionsTable).where(eq(optionsTable.id, 1));
  const rows = opts.forUpdate ? await q.for('update') : await q;
  return readOptions(rows[0]?.data);
}

/**
 * Merge an already validated patch into the stored options and return the result. Two concurrent
 * patches serialise on the row lock (the first caller creates the row), so neither loses the other's keys.
 */
export async function patchOptions(db: Db, patch: Partial<Options>): Promise<Options> {
  await db.insert(optionsTable).values({ id: 1, data: {} }).onConflictDoNothing();
  const current = await getOptions(db, { forUpdate: true });
  const next = { ...current, ...patch } as Options;
  await db
    .update(optionsTable)
    .set({ data: next as Record<string, unknown>, updatedAt: sql`now()` })
    .where(eq(optionsTable.id, 1));
  return next;
}
