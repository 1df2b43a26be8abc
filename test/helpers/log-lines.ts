/** A pino destination that keeps every JSON line it is given, parsed, for tests that read the logs. */
import { Writable } from 'node:stream';

export type LogLine = { level: number; msg: string; [k: string]: unknown };

export function logLines(): { lines: LogLine[]; sink: Writable } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  return { lines, sink };
}
