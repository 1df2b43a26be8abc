/** BOS age strings: `0`, `0h`, `30m`, `7d`, `2w` (case-insensitive). */
export const AGE_RE = /^(0|0[mhdw]|[1-9][0-9]*[mhdw])$/i;
/** component_actual_state_ttl: at least one hour (BOS 2.50). */
export const TTL_RE = /^[1-9][0-9]*[hdw]$/i;

const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86400, w: 604800 };

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
