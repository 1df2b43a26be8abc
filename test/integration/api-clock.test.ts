/**
 * The API's times are the database's: an API process whose own clock is two hours ahead stamps a new
 * session and a component write with the database's time, filters sessions by age against it, and
 * counts a live session's duration to it (the engine, which times nodes and sessions from these
 * stamps, measures on the same clock: engine/clock.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';

const AHEAD_MS = 2 * 3600_000;
let h: Harness;
const compute = { name: 'compute', path: 's3://boot-images/abc/manifest.json', type: 's3', nodeList: ['x3000c0s19b1n0'] };

beforeAll(async () => {
  h = await startHarness({ now: () => new Date(Date.now() + AHEAD_MS) });
  await h.ok(
    `mutation($name: String!, $input: SessionTemplateInput!) { putSessionTemplate(name: $name, input: $input) { template { name } } }`,
    {
      name: 'cos',
      input: { bootSets: [compute] },
    },
  );
});
afterAll(async () => {
  await h?.close();
});

const databaseNow = async () => new Date((await h.db.db.execute<{ now: string }>(sql`select now()::text as now`)).rows[0]!.now);
const within = (a: Date, b: Date, ms: number) => Math.abs(a.getTime() - b.getTime()) < ms;

describe('the API measures times with the database clock', () => {
  test("createSession stamps the session's start with the database's time", async () => {
    const r = await h.ok(
      `mutation($input: CreateSessionInput!) { createSession(input: $input) { session { name status { startTime } } } }`,
      {
        input: { operation: 'REBOOT', templateName: 'cos', name: 'stamped' },
      },
    );
    const started = new Date(r.createSession.session.status.startTime);
    expect(within(started, await databaseNow(), 60_000), `startTime ${started.toISOString()}`).toBe(true);
  });

  test('age filters count from the database time', async () => {
    await h.db.db.execute(sql`insert into sessions (tenant_key, name, operation, template_name, status, start_time)
      values ('', 'just-now', 'reboot', 'cos', 'running', now()), ('', 'yesterday', 'reboot', 'cos', 'running', now() - interval '1 day')`);
    const names = async (args: string) =>
      ((await h.ok(`{ sessions(${args}) { name } }`)).sessions as { name: string }[]).map((s) => s.name).filter((n) => n !== 'stamped');
    expect(await names('maxAge: "1h"')).toEqual(['just-now']);
    expect(await names('minAge: "1h"')).toEqual(['yesterday']);
    const deleted = await h.ok(`mutation { deleteSessions(minAge: "1h") { names } }`);
    expect(deleted.deleteSessions.names).toEqual(['yesterday']);
  });

  test("a live session's duration runs to the database's time", async () => {
    const r = await h.ok(`{ sessionStatus(name: "just-now") { timing { duration } } }`);
    // Started a moment ago by the database's clock: not two hours.
    expect(r.sessionStatus.timing.duration).toMatch(/^0:00:\d\d$/);
  });

  test("a component written through the API carries the database's time", async () => {
    const r = await h.ok(
      `mutation($input: ComponentInput!) { putComponent(id: "x3000c0s19b1n0", input: $input) {
        updatedAt desiredState { lastUpdated } lastAction { lastUpdated } } }`,
      { input: { enabled: true, desiredState: { configuration: 'cfg' }, lastAction: { action: 'session_setup' } } },
    );
    const now = await databaseNow();
    const c = r.putComponent;
    for (const [field, at] of [
      ['updatedAt', c.updatedAt],
      ['desiredState.lastUpdated', c.desiredState.lastUpdated],
      ['lastAction.lastUpdated', c.lastAction.lastUpdated],
    ]) {
      expect(within(new Date(at), now, 60_000), `${field} ${at}`).toBe(true);
    }
  });
});
