/**
 * docs/state-machine.md is drawn from the code: its generated part must be what `npm run docs` would
 * write now, and the diagram must reach every rule of the decision table.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOC, withGeneratedPart } from '../../scripts/state-machine.ts';
import { decisionEdges } from '../../src/domain/state-diagram.ts';

describe('the state machine document', () => {
  it('is current (run npm run docs after changing the decision table or an action operator)', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    expect(doc).toBe(withGeneratedPart(doc));
  });

  it('shows every rule of the decision table', () => {
    const rules = new Set(decisionEdges().map((e) => e.rule));
    expect([...rules].sort()).toEqual([
      '0-cfs',
      '0-pcs',
      '1',
      '1p',
      '2',
      '3',
      '4a',
      '4b',
      '4c',
      '4d',
      '4e',
      '4f',
      '5',
      '6',
      'D1',
      'D2',
      'D3',
      'D4',
      'D5',
      'D6',
      'D7',
      'U1',
      'U2',
    ]);
  });
});
