/**
 * The console's map never shows (or counts in its legend) a node in a disk deploy phase as stable,
 * although BOS's computed status says STABLE there: loaded and after live changes.
 */
import { expect, test } from 'vitest';
import { NodeStore } from '../../web/src/map/store.ts';
import { STATUSES } from '../../web/src/map/colors.ts';

/** A machineMap answer for these nodes (each value its own dictionary entry). */
const snapshot = (rows: [id: string, status: string, phase: string][]) => ({
  ids: rows.map((r) => r[0]),
  status: rows.map((_, i) => i),
  statuses: rows.map((r) => r[1]),
  phase: rows.map((_, i) => i),
  phases: rows.map((r) => r[2]),
  session: rows.map(() => 1),
  sessions: ['', 's'],
  failureReason: rows.map(() => 0),
  failureReasons: [''],
});
const legend = (s: NodeStore) => Object.fromEntries(s.counts().flatMap((n, i) => (n ? [[STATUSES[i], n]] : [])));

test('deploying nodes are DEPLOYING on the map, not STABLE, and become STABLE once done', () => {
  const s = new NodeStore();
  s.load(
    snapshot([
      ['a', 'STABLE', 'NONE'],
      ['b', 'STABLE', 'WRITING'],
      ['c', 'POWER_ON_CALLED', 'POWERING_ON'],
    ]),
  );
  expect(legend(s)).toEqual({ STABLE: 1, DEPLOYING: 1, POWER_ON_CALLED: 1 });
  // c leaves powering_on for a deploy phase (status STABLE), b's deploy ends.
  s.apply([
    { componentId: 'c', toStatus: 'STABLE', toPhase: 'DEPLOYING' },
    { componentId: 'b', toPhase: 'NONE' },
  ]);
  expect(legend(s)).toEqual({ STABLE: 2, DEPLOYING: 1 });
  expect(STATUSES[s.status[2]!]).toBe('DEPLOYING');
});
