/**
 * Hardened inputs at the edge: the cost limit, strings PostgreSQL cannot store, GraphQL's own variable
 * errors naming the field, and "the database is down" as UNAVAILABLE rather than a masked bug.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { errorOf, startHarness, COMPONENT_FIELDS, type Harness } from './api-harness.ts';
import { isDatabaseUnavailable } from '../../src/api/unavailable.ts';
import { startApiServer } from '../../src/api/server.ts';
import { connect } from '../../src/db/client.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('cost limit', () => {
  test('a full 10,000-node page passes; thirty of them in one document do not', async () => {
    const one = await h.gql(`{ components(first: 10000) { nodes { ${COMPONENT_FIELDS} } } }`);
    expect(one.errors).toBeUndefined();
    const many = Array.from(
      { length: 30 },
      (_, i) => `a${i}: components(first: 10000) { nodes { id enabled error status { phase } } }`,
    ).join(' ');
    const r = await h.gql(`{ ${many} }`);
    expect(errorOf(r)).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: expect.stringMatching(/query costs more than 1,000,000/),
    });
    // A page size given by variable counts as the largest page.
    const byVar = await h.gql(
      `query($n: Int) { a: components(first: $n) { nodes { ${COMPONENT_FIELDS} } } b: components(first: $n) { nodes { ${COMPONENT_FIELDS} } } c: components(first: $n) { nodes { ${COMPONENT_FIELDS} } } }`,
      { n: 10 },
    );
    expect(errorOf(byVar).code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('inputs', () => {
  test('NUL and unpaired surrogates are refused naming the field, in every field', async () => {
    const nul = await h.gql('mutation($i: ComponentInput!) { putComponent(id: "x1c0s0b0n0", input: $i) { id } }', {
      i: { error: 'a\u0000b' },
    });
    expect(errorOf(nul)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.error' });
    const lone = await h.gql('query($n: String!) { session(name: $n) { name } }', { n: 'x\ud800' });
    expect(errorOf(lone)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'name' });
    const pair = await h.gql('query($n: String!) { session(name: $n) { name } }', { n: '😀' });
    expect(pair.errors).toBeUndefined();
  });

  test("GraphQL's variable errors name the input path", async () => {
    const r = await h.gql('mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }', {
      c: [{ id: 'x1c0s0b0n0' }, { id: 'x1c0s0b0n1', enabled: 'yes' }],
    });
    expect(errorOf(r)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'c[1].enabled' });
    const missing = await h.gql('mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }', {});
    expect(errorOf(missing)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'c' });
  });
});

describe('database unavailable', () => {
  test('lost and refused connections are recognised through wrappers', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: new Error('Connection terminated unexpectedly') }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('the database system is shutting down'), { code: '57P03' }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }))).toBe(false);
  });

  test('a server whose database is gone answers UNAVAILABLE (503), and healthz says so', async () => {
    const dead = connect('postgres://postgres:x@127.0.0.1:1/none');
    const s = await startApiServer({ db: dead.db, scheduler: h.scheduler, port: 0, host: '127.0.0.1', auth: h.auth.auth });
    try {
      const r = await fetch(s.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
        body: JSON.stringify({ query: '{ sessions { name } }' }),
      });
      expect(r.status).toBe(503);
      const body = (await r.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]).toMatchObject({ extensions: { code: 'UNAVAILABLE' }, message: expect.stringMatching(/unavailable/) });
      const health = await (await fetch(s.url.replace('/graphql', '/healthz'))).json();
      expect(health).toMatchObject({ apiStatus: 'ok', dbStatus: 'not_available' });
    } finally {
      await s.close();
      await dead.close();
    }
  });
});
