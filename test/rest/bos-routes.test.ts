/** Every operation of BOS v2's contract has a route in the REST door, and the door has no route the contract lacks. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { expect } from 'vitest';
import { ROUTES } from '../../src/rest/router.ts';
import { contractTest } from '../contract/contracts.ts';
import { contractsDir } from '../helpers/contracts-dir.ts';

contractTest("the routes are exactly the contract's operations", async () => {
  const doc = parse(readFileSync(path.join(contractsDir(), 'bos-v2.openapi.yaml'), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const contract = Object.entries(doc.paths)
    .flatMap(([p, item]) =>
      ['get', 'put', 'post', 'patch', 'delete'].filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p.replace(/\{[^}]+\}/g, '{}')}`),
    )
    .sort();
  const served = ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:[a-z_]+/g, '{}')}`).sort();
  expect(served).toEqual(contract);
});
