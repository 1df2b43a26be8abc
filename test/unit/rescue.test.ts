/**
 * Rescue's input rules (docs/rescue.md), pure: which boot sets need a rescue image and where it comes
 * from, the boot set field through validation and back, and a rescue that cannot be staged.
 */
import { describe, expect, test } from 'vitest';
import { checkBootSets, recordToDraft, rescueImageOf, validateTemplate, type BootSetRecord } from '../../src/domain/templates.ts';
import { checkCreateSession } from '../../src/domain/sessions.ts';

const bootSet = (o: Partial<BootSetRecord> = {}): BootSetRecord => ({
  path: 's3://b/m.json',
  type: 's3',
  arch: 'X86',
  node_list: ['x1000c0s0b0n0'],
  ...o,
});
const rules = { rejectNids: false };
const RULES = { sessionLimitRequired: false, rejectNids: false };

describe('rescue', () => {
  test("the boot set's rescue image first, then the option", () => {
    expect(rescueImageOf({ rescue_image: 's3://r/own.json' }, 's3://r/default.json')).toBe('s3://r/own.json');
    expect(rescueImageOf({}, 's3://r/default.json')).toBe('s3://r/default.json');
    expect(rescueImageOf({}, '')).toBe('');
  });

  test('a RESCUE needs a rescue image for every boot set: the error names the field; other operations do not', () => {
    const t = { bootSets: { a: bootSet({ rescue_image: 's3://r/m.json' }), b: bootSet() } };
    expect(checkBootSets(t, 'rescue', rules).errors).toEqual([
      { field: 'bootSets.b.rescueImage', message: "no rescue image: set the boot set's rescueImage or the option default_rescue_image" },
    ]);
    expect(checkBootSets(t, 'rescue', { ...rules, defaultRescueImage: 's3://r/d.json' }).errors).toEqual([]);
    for (const op of ['boot', 'reboot', 'shutdown', 'unrescue'] as const) expect(checkBootSets(t, op, rules).errors).toEqual([]);
  });

  test("a rescue reads no boot set image, so the boot set's type is not its concern", () => {
    const t = { bootSets: { a: bootSet({ type: 'other', rescue_image: 's3://r/m.json' }) } };
    expect(checkBootSets(t, 'reboot', rules).errors.map((e) => e.field)).toEqual(['bootSets.a.type']);
    expect(checkBootSets(t, 'rescue', rules).errors).toEqual([]);
    expect(checkBootSets(t, 'unrescue', rules).errors).toEqual([]);
  });

  test('rescueImage is stored as rescue_image and read back; too long is an error naming it', () => {
    const draft = {
      bootSets: [{ name: 'a', path: 's3://b/m.json', type: 's3', nodeList: ['x1000c0s0b0n0'], rescueImage: 's3://r/m.json' }],
    };
    const v = validateTemplate(draft, rules);
    expect(v.ok && v.value.bootSets.a?.rescue_image).toBe('s3://r/m.json');
    if (!v.ok) return;
    expect(recordToDraft({ ...v.value, name: 't', tenant: null }).bootSets[0]?.rescueImage).toBe('s3://r/m.json');
    const long = validateTemplate({ bootSets: [{ ...draft.bootSets[0]!, rescueImage: 'x'.repeat(4096) }] }, rules);
    expect(long.ok ? [] : long.errors.map((e) => e.field)).toEqual(['bootSets.a.rescueImage']);
  });

  test('a rescue or an unrescue cannot be staged', () => {
    for (const operation of ['rescue', 'unrescue'] as const) {
      const c = checkCreateSession({ operation, templateName: 't', stage: true }, RULES);
      expect(c.ok ? [] : c.errors).toEqual([{ field: 'stage', message: `a ${operation} acts on the nodes now; it cannot be staged` }]);
      expect(checkCreateSession({ operation, templateName: 't' }, RULES).ok).toBe(true);
    }
  });
});
