/**
 * applyStaged (reference §4.11): move each node's staged state to its desired state and enable it,
 * validated against the staging session's operation. A node that fails is disabled with the reason
 * as its error; either way it now belongs to the staging session and its last action is apply_staged.
 */
import type { Db } from '../client.ts';
import type { ComponentRow } from '../schema.ts';
import type { ComponentPatch } from '../../domain/components.ts';
import { lockComponents } from './read.ts';
import { getSessionsByName } from '../sessions/rows.ts';
import { visibleIds } from '../tenants.ts';
import { writeComponents } from './write.ts';

export interface ApplyStagedInput {
  ids: readonly string[];
  /** The caller's tenant: foreign nodes are ignored, the staging session is looked up in its namespace. */
  tenant: string | null;
  actor: string;
  /** Option clear_stage. */
  clearStage: boolean;
  now?: Date;
}

export interface ApplyStagedOutcome {
  succeeded: string[];
  failed: { id: string; error: string }[];
  ignored: string[];
  kickStatus: boolean;
}

const EMPTY = { kernel: '', kernelParameters: '', initrd: '' };

export async function applyStaged(db: Db, input: ApplyStagedInput): Promise<ApplyStagedOutcome> {
  const tenantKey = input.tenant ?? '';
  const visible = await visibleIds(db, input.tenant, input.ids);
  const rows = new Map((await lockComponents(db, [...visible])).map((r) => [r.id, r]));
  const ignored = input.ids.filter((id) => !rows.get(id)?.stagedSession);
  const staged = [...rows.values()].filter((r) => r.stagedSession !== '');
  const sessions = await getSessionsByName(db, tenantKey, [...new Set(staged.map((r) => r.stagedSession))]);

  const succeeded: string[] = [];
  const failed: { id: string; error: string }[] = [];
  const writes = staged.map((r) => {
    const problem = stagedProblem(r, sessions.get(r.stagedSession)?.operation);
    if (problem) failed.push({ id: r.id, error: problem });
    else succeeded.push(r.id);
    return { id: r.id, body: body(r, sessions.get(r.stagedSession)?.operation, problem, input.clearStage) };
  });
  const result = await writeComponents(db, writes, {
    mode: 'patch',
    actor: input.actor,
    tenantKey,
    now: input.now,
    event: { kind: 'stage', action: 'apply_staged' },
  });
  return { succeeded, failed, ignored, kickStatus: result.kickStatus };
}

/** Why this node's staged state cannot be applied, or null. */
function stagedProblem(r: ComponentRow, operation: string | undefined): string | null {
  if (!operation) return 'Staged session no longer exists';
  const a = [r.stagedKernel, r.stagedKernelParameters, r.stagedInitrd];
  if (operation === 'shutdown' && a.some((v) => v !== '')) {
    return 'Staged operation is shutdown but boot artifacts have been specified';
  }
  if (operation !== 'shutdown' && a.some((v) => v === '')) {
    return `Staged operation is ${operation} but some boot artifacts have not been specified`;
  }
  return null;
}

function body(r: ComponentRow, operation: string | undefined, problem: string | null, clearStage: boolean): ComponentPatch {
  // BOS saves the whole record: the desired state is always "written", so the attempt counters reset.
  const b: ComponentPatch = {
    session: r.stagedSession,
    lastAction: { action: 'apply_staged' },
    desiredState: { bootArtifacts: {} },
  };
  if (problem) {
    b.enabled = false;
    b.error = problem;
  } else {
    b.enabled = true;
    b.error = '';
    b.desiredState = {
      bootArtifacts: { kernel: r.stagedKernel, kernelParameters: r.stagedKernelParameters, initrd: r.stagedInitrd },
      configuration: r.stagedConfiguration,
    };
    if (operation === 'reboot') b.actualState = { bootArtifacts: { ...EMPTY }, bssToken: '' };
  }
  if (clearStage) b.stagedState = { bootArtifacts: { ...EMPTY }, configuration: '', session: '' };
  return b;
}
