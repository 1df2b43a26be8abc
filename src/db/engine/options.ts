import type { Queryable } from '../queryable.ts';
import { readOptions, type Options } from '../../domain/options.ts';

/** Operators re-read the options on every tick (BOS base.py), so a change applies at the next tick. */
export async function loadOptions(q: Queryable): Promise<Options> {
  const r = await q.query('select data from options where id = 1');
  return readOptions(r.rows[0]?.data ?? null);
}
