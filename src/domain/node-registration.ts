/**
 * A node as an operator registers it for a standalone site (GraphQL `registerNodes`, the CLI, a YAML
 * file): xname, MAC, arch, groups, role, enabled, and its BMC. Checked here, once, for every door;
 * problems name the field (`nodes[2].bmc.address`).
 */
import { z } from 'zod';
import { parseComponentId } from './xname.ts';
import { check, joinField, text, type Checked } from './validation.ts';

const MAC = /^[0-9a-f]{2}([:-]?[0-9a-f]{2}){5}$/i;

/** `52:54:00:AB:cd:01`, `52-54-00-ab-cd-01` or `525400abcd01` -> `52:54:00:ab:cd:01`; undefined if not a MAC. */
export function normaliseMac(raw: string): string | undefined {
  if (!MAC.test(raw.trim())) return undefined;
  return raw.trim().toLowerCase().replace(/[:-]/g, '').match(/../g)!.join(':');
}

const bmc = z
  .object({
    driver: z.enum(['ipmi', 'redfish', 'none']),
    address: text(0, 1024).default(''),
    username: text(0, 255).default(''),
    /** Write-only: sealed before it is stored, never returned. Absent = keep the stored one. */
    password: text(0, 1024).optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.driver === 'none') return;
    if (!b.address) ctx.addIssue({ code: 'custom', path: ['address'], message: `is required for driver ${b.driver}` });
    else if (b.driver === 'ipmi' && !/^(\[[0-9a-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/i.test(b.address)) {
      ctx.addIssue({ code: 'custom', path: ['address'], message: 'must be host or host:port for ipmi' });
    } else if (b.driver === 'redfish' && !/^https?:\/\/[^/]+\/redfish\/v1\/Systems\/[^/]+\/?$/.test(b.address)) {
      ctx.addIssue({ code: 'custom', path: ['address'], message: 'must be the ComputerSystem URL, e.g. https://bmc/redfish/v1/Systems/1' });
    }
  });

export const nodeDraftSchema = z
  .object({
    xname: text(1, 127).transform((v, ctx) => {
      const p = parseComponentId(v);
      if ('error' in p) {
        ctx.addIssue({ code: 'custom', message: p.error });
        return z.NEVER;
      }
      return p.id;
    }),
    hostname: text(0, 253).default(''),
    mac: text(1, 32)
      .regex(MAC, 'must be a MAC address such as 52:54:00:00:00:01')
      .transform((m) => normaliseMac(m)!),
    arch: z.enum(['X86', 'ARM', 'Other', 'Unknown']).default('X86'),
    role: text(1, 63).default('Compute'),
    subRole: text(0, 63).default(''),
    groups: z
      .array(text(1, 127).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, ".", "_" and "-"'))
      .max(64)
      .default([]),
    enabled: z.boolean().default(true),
    locked: z.boolean().default(false),
    bmc: bmc.default({ driver: 'none', address: '', username: '' }),
  })
  .strict();

export type NodeSpec = z.output<typeof nodeDraftSchema>;

/** Every draft checked; duplicate xnames or MACs in one call are errors too. */
export function checkNodeDrafts(drafts: unknown[], prefix = 'nodes'): Checked<NodeSpec[]> {
  const out: NodeSpec[] = [];
  const errors: { field: string; message: string }[] = [];
  const seen = { xname: new Map<string, number>(), mac: new Map<string, number>() };
  drafts.forEach((d, i) => {
    const r = check(nodeDraftSchema, d, `${prefix}[${i}]`);
    if (!r.ok) {
      errors.push(...r.errors);
      return;
    }
    for (const k of ['xname', 'mac'] as const) {
      const first = seen[k].get(r.value[k]);
      if (first !== undefined) errors.push({ field: joinField(`${prefix}[${i}]`, k), message: `repeats ${prefix}[${first}].${k}` });
      else seen[k].set(r.value[k], i);
    }
    out.push(r.value);
  });
  return errors.length ? { ok: false, errors, warnings: [] } : { ok: true, value: out, warnings: [] };
}
