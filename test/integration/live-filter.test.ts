/**
 * A subscription filters twice: in SQL when it reads the log (catch-up, Query.componentEvents) and in
 * memory for live events. Both must select the same events, or a resumed client would see a different
 * stream than a connected one. Random events, random filters, one answer.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import fc from 'fast-check';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { appendEvents, type NewEvent } from '../../src/db/events.ts';
import { readEventsPage, type EventFilter, type LiveEvent } from '../../src/db/live.ts';
import { tenantXnames } from '../../src/db/tenants.ts';
import { eventMatcher } from '../../src/api/live/resolvers.ts';

const IDS = ['x1c0s0b0n0', 'x1c0s0b0n1', 'x1c0s1b0n0', 'x1c0s1b0n1'];
const SESSIONS = ['', 's1', 's2'];
const TENANTS = ['', 'acme'];
const PHASES = [null, '', 'powering_on', 'powering_off', 'configuring'];
const STATUSES = [null, 'stable', 'on_hold', 'power_on_pending', 'failed'];
const KINDS = ['transition', 'action', 'error', 'failed', 'report'];

let db: TestDb;
let all: LiveEvent[];
let acmeXnames: Set<string>;

beforeAll(async () => {
  db = await freshDb();
  await db.pool.query(`insert into tenant_xnames (tenant, xname) values ('acme', $1), ('acme', $2)`, [IDS[0], IDS[2]]);
  const events = fc
    .sample(
      fc.record({
        componentId: fc.constantFrom(...IDS),
        session: fc.constantFrom(...SESSIONS),
        sessionTenant: fc.constantFrom(...TENANTS),
        kind: fc.constantFrom(...KINDS),
        fromPhase: fc.constantFrom(...PHASES),
        toPhase: fc.constantFrom(...PHASES),
        fromStatus: fc.constantFrom(...STATUSES),
        toStatus: fc.constantFrom(...STATUSES),
      }),
      { numRuns: 300, seed: 7 },
    )
    .map((e): NewEvent => ({ ...e, kind: e.kind as NewEvent['kind'], actor: 'test' }));
  await appendEvents(db.db, events);
  all = await readEventsPage(db.db, {}, 0, Number.MAX_SAFE_INTEGER, 1000);
  acmeXnames = await tenantXnames(db.db, 'acme');
});
afterAll(async () => {
  await db.drop();
});

const filterArb = fc.record({
  ids: fc.option(fc.subarray(IDS, { minLength: 1 }), { nil: null }),
  session: fc.option(fc.constantFrom(...SESSIONS), { nil: null }),
  sessionTenant: fc.constantFrom(...TENANTS),
  phase: fc.option(fc.constantFrom('', 'powering_on', 'configuring'), { nil: null }),
  status: fc.option(fc.constantFrom('stable', 'failed'), { nil: null }),
  kinds: fc.option(fc.subarray(KINDS, { minLength: 1 }), { nil: null }),
  tenant: fc.constantFrom(null, 'acme'),
});

test('the log query and the live matcher select the same events', async () => {
  expect(all).toHaveLength(300);
  await fc.assert(
    fc.asyncProperty(filterArb, async (f: EventFilter) => {
      const fromSql = await readEventsPage(db.db, f, 0, Number.MAX_SAFE_INTEGER, 1000);
      const inMemory = all.filter(eventMatcher(f, f.tenant ? acmeXnames : null));
      expect(fromSql.map((e) => e.id)).toEqual(inMemory.map((e) => e.id));
    }),
    { numRuns: 150, seed: 11 },
  );
});
