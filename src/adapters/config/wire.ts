import type { ConfigPatch } from '../ports.ts';

/** ConfigPatch -> the CFS v3 `patch` body BOS sends. */
export function wirePatch(p: ConfigPatch): { enabled?: boolean; desired_config?: string; tags?: Record<string, string>; state?: [] } {
  const out: ReturnType<typeof wirePatch> = {};
  if (p.enabled !== undefined) out.enabled = p.enabled;
  if (p.desiredConfig !== undefined) out.desired_config = p.desiredConfig;
  if (p.tags !== undefined) out.tags = p.tags;
  if (p.clearState) out.state = [];
  return out;
}
