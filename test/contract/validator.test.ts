/** The contract checks must be able to fail: feed them exchanges that break each contract. */
import { describe, expect } from 'vitest';
import type { Exchange } from '../../src/sim/server.ts';
import { contract, contractTest } from './contracts.ts';

const x = (o: Partial<Exchange>): Exchange => ({
  service: 'cfs',
  method: 'GET',
  path: '/',
  query: '',
  requestHeaders: { 'content-type': 'application/json' },
  requestBody: '',
  status: 200,
  responseHeaders: { 'content-type': 'application/json' },
  responseBody: '',
  ...o,
});

describe('contract validator self-test', () => {
  contractTest('accepts a good exchange', async () => {
    const c = await contract('cfs');
    expect(
      c.check(
        x({
          path: '/v3/components',
          query: 'ids=a',
          responseBody: JSON.stringify({ components: [{ id: 'a', configuration_status: 'pending' }], next: null }),
        }),
      ),
    ).toEqual([]);
  });

  contractTest('catches a bad CFS response and a bad CFS request', async () => {
    const c = await contract('cfs');
    const bad = c.check(
      x({ path: '/v3/components', responseBody: JSON.stringify({ components: [{ id: 'a', configuration_status: 'weird' }] }) }),
    );
    expect(bad.map((v) => v.where)).toEqual(['response']);
    const req = c.check(
      x({
        method: 'PATCH',
        path: '/v3/components',
        requestBody: JSON.stringify({ patch: { enabeld: true }, filters: { ids: 'a' } }),
        responseBody: JSON.stringify({ component_ids: [] }),
      }),
    );
    expect(req.map((v) => v.where)).toEqual(['request']);
  });

  contractTest('catches a bad PCS request and an undeclared status', async () => {
    const c = await contract('pcs');
    const bad = c.check(
      x({
        service: 'pcs',
        method: 'POST',
        path: '/transitions',
        requestBody: JSON.stringify({ operation: 'explode', location: [] }),
        responseBody: JSON.stringify({ transitionID: '3fa85f64-5717-4562-b3fc-2c963f66afa6', operation: 'On' }),
      }),
    );
    expect(bad.map((v) => v.where)).toEqual(['request']);
    const undeclared = c.check(
      x({ service: 'pcs', method: 'POST', path: '/power-status', requestBody: '{"xname":["x1"]}', status: 418, responseBody: '{}' }),
    );
    expect(undeclared.map((v) => v.where)).toEqual(['response']);
  });

  contractTest('catches bad Swagger 2.0 (HSM, BSS) bodies after conversion', async () => {
    const hsm = await contract('hsm');
    const v = hsm.check(
      x({
        service: 'hsm',
        method: 'POST',
        path: '/hsm/v2/State/Components/Query',
        requestBody: JSON.stringify({ ComponentIDs: 'x1' }),
        responseBody: JSON.stringify({ Components: [{ ID: 'x1', Type: 'Node', State: 'Sleepy' }] }),
      }),
    );
    expect(v.map((e) => e.where).sort()).toEqual(['request', 'response']);
    const bss = await contract('bss');
    const b = bss.check(
      x({ service: 'bss', path: '/boot/v1/bootparameters', query: 'name=x1', responseBody: JSON.stringify([{ hosts: 'x1' }]) }),
    );
    expect(b.map((e) => e.where)).toEqual(['response']);
    const route = bss.check(x({ service: 'bss', path: '/boot/v1/nothing' }));
    expect(route.map((e) => e.where)).toEqual(['route']);
  });
});
