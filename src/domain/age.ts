/** BOS age strings: `0`, `0h`, `30m`, `7d`, `2w` (case-insensitive). */
export const AGE_RE = /^(0|0[mhdw]|[1-9][0-9]*[mhdw])$/i;
/** component_actual_state_ttl: at least one hour (BOS 2.50). */
export const TTL_RE = /^[1-9][0-9]*[hdw]$/i;

const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86400, w: 604800 };

/**
 * The longest age accepted: 100 years of 365.25 days (`36525d`, `876600h`, `52596000m`; `5217w`). Longer ones are
 * refused where they come in: far enough back they are not even a date (`99999999999999w` is
 * before any time a Date or PostgreSQL can hold), and no session or TTL needs them.
 */
export const MAX_AGE_SECONDS = 36525 * 86400;

/** What a too-long age is told. */
export const MAX_AGE_MESSAGE = 'must be at most 100 years (36525d)';

/** A BOS age string (AGE_RE) no longer than MAX_AGE_SECONDS. */
export function isAge(age: string): boolean {
  return AGE_RE.test(age) && ageSeconds(age) <= MAX_AGE_SECONDS;
}

/** A TTL string (TTL_RE, at least an hour) no longer than MAX_AGE_SECONDS. */
export function isTtl(ttl: string): boolean {
  return TTL_RE.test(ttl) && ageSeconds(ttl) <= MAX_AGE_SECONDS;
}

/** Seconds in an age string; `0` and `0x` are 0. Throws on a malformed string. */
export function ageSeconds(age: string): number {
  if (!AGE_RE.test(age)) throw new Error(`invalid age string "${age}"`);
  if (age === '0') return 0;
  const unit = age.slice(-1).toLowerCase();
  return Number(age.slice(0, -1)) * UNIT_SECONDS[unit]!;
}

/** Python `str(timedelta)`, as BOS prints durations: `0:00:20`, `1 day, 2:03:04`. */
export function formatDuration(ms: number): string {
  let s = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(s / 86400);
  s -= days * 86400;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const hms = `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`;
  return days > 0 ? `${days} day${days === 1 ? '' : 's'}, ${hms}` : hms;
}
