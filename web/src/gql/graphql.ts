/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type BmcDriver =
  | 'IPMI'
  /** No BMC bootorch can drive: power is someone else's business. */
  | 'NONE'
  | 'REDFISH';

/** All given fields must match. */
export type ComponentFilter = {
  /**
   * bootorch: only components that changed (updatedAt) in the last this many seconds, on the
   * database's clock (1 to 315360000, ten years).
   */
  changedWithinSeconds?: number | null | undefined;
  enabled?: boolean | null | undefined;
  /** bootorch: any of these failure reasons (domain/failures.ts names). */
  failureReason?: Array<string> | null | undefined;
  /** bootorch: ids starting with this xname prefix (`x1000c0` is a chassis, `x1000c0s1b0n1` one node). */
  idPrefix?: string | null | undefined;
  ids?: Array<string> | null | undefined;
  /**
   * bootorch: a BOS limit expression (`compute-a`, `x1000c0s1b0n0,x1000c0s1b0n1`, `compute,!cab-x1000`),
   * resolved against the inventory (HSM groups, partitions and roles) as session setup resolves it.
   */
  limit?: string | null | undefined;
  phase?: ComponentPhase | null | undefined;
  session?: string | null | undefined;
  stagedSession?: string | null | undefined;
  /** Any of these statuses. */
  status?: Array<ComponentStatus> | null | undefined;
  /**
   * bootorch: only components that have not changed (updatedAt) for at least this many seconds, on the
   * database's clock (1 to 315360000); with changedWithinSeconds, less than it. updatedAt has no index
   * (every write changes it), so this bound narrows what the other filters select.
   */
  unchangedForSeconds?: number | null | undefined;
};

/** bootorch: sort orders of the components query (each ties on id). */
export type ComponentOrder =
  | 'FAILURE_REASON'
  | 'ID'
  /** When the component last changed (updatedAt). */
  | 'LAST_CHANGE'
  | 'PHASE'
  | 'SESSION'
  | 'STATUS';

export type ComponentPhase =
  /** Disk deploy: booting from disk, waiting for the installed system's first report. */
  | 'BOOTING_DISK'
  | 'CONFIGURING'
  /** Disk deploy: the deploy agent runs in the ramdisk (downloading, verifying). */
  | 'DEPLOYING'
  | 'NONE'
  | 'POWERING_OFF'
  | 'POWERING_ON'
  /** Disk deploy: written; bootorch sets the boot device to disk and power-cycles the node. */
  | 'SWITCHING_TO_DISK'
  /** Disk deploy: the deploy agent writes the image to the disk. */
  | 'WRITING';

/** BOS's computed status: the override if any, else derived from phase and last action. */
export type ComponentStatus =
  | 'CONFIGURING'
  | 'FAILED'
  | 'ON_HOLD'
  | 'POWER_OFF_FORCEFULLY_CALLED'
  | 'POWER_OFF_GRACEFULLY_CALLED'
  | 'POWER_OFF_PENDING'
  | 'POWER_ON_CALLED'
  | 'POWER_ON_PENDING'
  /** Waiting to be admitted by the session's rollout policy (bootorch). */
  | 'QUEUED'
  | 'STABLE';

export type CreateSessionInput = {
  includeDisabled?: boolean | null | undefined;
  /** BOS limit expression (`x1,x2`, `all,!x3`, `group1,&role`); empty or `*` means no limit. */
  limit?: string | null | undefined;
  /** Default: a random UUID. */
  name?: string | null | undefined;
  operation: SessionOperation;
  /** Overrides the template's rollout defaults field by field. */
  rollout?: RolloutPolicyInput | null | undefined;
  stage?: boolean | null | undefined;
  templateName: string;
};

export type PlannedAction =
  /** Booted as desired; only CFS has work to do. */
  | 'CONFIGURE_ONLY'
  /** Already booted and configured as desired. */
  | 'NOTHING'
  /** On (or in an unknown power state) and booting other artifacts, or a reboot: power off, then on. */
  | 'POWER_CYCLE'
  | 'POWER_OFF'
  | 'POWER_ON'
  /** Left out; see skipReason. */
  | 'SKIP'
  /** PCS did not answer for the node. */
  | 'UNKNOWN';

export type Role =
  | 'ADMIN'
  | 'NODE'
  | 'OPERATOR'
  | 'VIEWER';

/** See RolloutPolicy. Null or missing fields are not set (a session then inherits the template's). */
export type RolloutPolicyInput = {
  canary?: number | null | undefined;
  failureBudget?: string | null | undefined;
  jobRetryBackoff?: boolean | null | undefined;
  jobRetryDelay?: number | null | undefined;
  jobRetryMaxDelay?: number | null | undefined;
  maxBootWaitTime?: number | null | undefined;
  maxInFlight?: string | null | undefined;
  maxPowerOffWaitTime?: number | null | undefined;
  maxPowerOnWaitTime?: number | null | undefined;
  powerOnWaveIntervalSeconds?: number | null | undefined;
  powerOnWaveSize?: number | null | undefined;
  powerUnknownTimeout?: number | null | undefined;
  retryPolicy?: number | null | undefined;
};

export type SessionOperation =
  /** Reach the desired state, rebooting only nodes whose artifacts differ. */
  | 'BOOT'
  /** Always reboot. */
  | 'REBOOT'
  /**
   * bootorch: boot into the rescue image (the boot set's rescueImage, else the option
   * defaultRescueImage), keeping the nodes' desired state (docs/rescue.md).
   */
  | 'RESCUE'
  /** Power off. */
  | 'SHUTDOWN'
  /** bootorch: bring rescued nodes back: reboot them into their desired state. */
  | 'UNRESCUE';

/** bootorch: a session's result (src/domain/session-result.ts). */
export type SessionResult =
  /** Ended by an operator before its nodes were done. */
  | 'ABORTED'
  /** Aborted by an operator; its nodes are being released. */
  | 'ABORTING'
  /** Every node reached its desired state. */
  | 'COMPLETE'
  /** Ended with some nodes failed. */
  | 'COMPLETE_WITH_FAILURES'
  /** Could not run (see the session's error). */
  | 'FAILED'
  /** No new action starts until it is resumed. */
  | 'PAUSED'
  /** Waiting for its setup to run. */
  | 'PENDING'
  | 'RUNNING';

export type SessionState =
  | 'COMPLETE'
  | 'PENDING'
  | 'RUNNING';

export type SkipReason =
  | 'ANOTHER_TENANT'
  | 'DISABLED_IN_INVENTORY'
  | 'EXCLUDED_BY_LIMIT'
  | 'LOCKED'
  | 'NOT_A_COMPONENT'
  | 'NOT_IN_INVENTORY'
  /** An UNRESCUE leaves out nodes that are not rescued. */
  | 'NOT_RESCUED'
  /** It failed its last quarantineAfterFailedSessions sessions and the limit does not name it (see explain's quarantine). */
  | 'QUARANTINED'
  /** Rescued: only a RESCUE or an UNRESCUE session takes it (docs/rescue.md). */
  | 'RESCUED'
  | 'WRONG_ARCH';

export type StatusOverride =
  | 'FAILED'
  | 'NONE'
  | 'ON_HOLD'
  | 'QUEUED';

/** What an operator can do about a node, as the console offers it. */
export type SuggestedAction =
  /** Clear its failure and enable it: the operators take it from where it is toward its desired state. */
  | 'ENABLE'
  /** Nothing is needed, or nothing a button could do (e.g. wait for a service to come back). */
  | 'NONE'
  /** Resume its paused session. */
  | 'RESUME_SESSION'
  /** A new session of just this node (its last session's template and operation), dry run first. */
  | 'RETRY';

export type WaitKind =
  | 'CONFIGURATION'
  | 'DISABLED'
  /** A disk deploy step: the deploy agent's heartbeats, the switch to disk, or the installed system's report. */
  | 'DISK_DEPLOY'
  | 'FAILED'
  | 'FORCEFUL_POWER_OFF'
  | 'NOTHING'
  /** An outside service (PCS, HSM, BSS, CFS, IMS) is failing: bootorch keeps asking and goes on when it answers. Not a failure of the node. */
  | 'OUTSIDE_SERVICE'
  | 'POWER_OFF'
  | 'POWER_ON'
  | 'POWER_ON_OR_BOOT_REPORT'
  /** Its power could not be read (BMC unreachable, refusing the login, timing out, answering an error): held, no power action, until a read succeeds or power_unknown_timeout fails it with the cause. */
  | 'POWER_UNKNOWN'
  | 'ROLLOUT_ADMISSION'
  | 'SESSION_PAUSED'
  | 'STATUS_EVALUATION';

export type ConsoleNodeConsoleQueryVariables = Exact<{
  id: string;
  attempt?: string | null | undefined;
  after?: string | null | undefined;
  search?: string | null | undefined;
}>;


export type ConsoleNodeConsoleQuery = { nodeConsole: { attempt: string, text: string, cursor: string, attempts: Array<{ attempt: string, bytes: number, first: string, last: string }> } | null };

export type ConsoleWhoamiQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleWhoamiQuery = { whoami: { subject: string, role: Role, tenant: string | null, via: string } };

export type ConsoleMachineMapQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleMachineMapQuery = { machineMap: { cursor: string | null, ids: Array<string>, status: number[], statuses: Array<ComponentStatus>, phase: number[], phases: Array<ComponentPhase>, session: number[], sessions: Array<string>, failureReason: number[], failureReasons: Array<string> } };

export type ConsoleComponentEventBatchesSubscriptionVariables = Exact<{
  after?: string | null | undefined;
}>;


export type ConsoleComponentEventBatchesSubscription = { componentEventBatches: { cursor: string, events: Array<{ cursor: string, at: string, componentId: string, session: string, kind: string, toPhase: ComponentPhase | null, toStatus: ComponentStatus | null, reason: string | null, error: string | null }> } };

export type ConsoleNodeTableQueryVariables = Exact<{
  filter?: ComponentFilter | null | undefined;
  first: number;
  after?: string | null | undefined;
  orderBy?: ComponentOrder | null | undefined;
  descending?: boolean | null | undefined;
}>;


export type ConsoleNodeTableQuery = { components: { totalCount: number, nodes: Array<{ id: string, enabled: boolean, session: string, failureReason: string, error: string, updatedAt: string, status: { phase: ComponentPhase, status: ComponentStatus } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type ConsoleNodeIdsQueryVariables = Exact<{
  filter?: ComponentFilter | null | undefined;
  after?: string | null | undefined;
}>;


export type ConsoleNodeIdsQuery = { components: { nodes: Array<{ id: string }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type ConsoleEnableNodesMutationVariables = Exact<{
  ids: Array<string> | string;
}>;


export type ConsoleEnableNodesMutation = { patchComponents: Array<{ id: string }> };

export type ConsoleSessionOriginQueryVariables = Exact<{
  name: string;
}>;


export type ConsoleSessionOriginQuery = { session: { name: string, templateName: string, operation: SessionOperation } | null };

export type ConsoleNodeQueryVariables = Exact<{
  id: string;
}>;


export type ConsoleNodeQuery = { component: { id: string, enabled: boolean, error: string, failureReason: string, session: string, sessionTenant: string | null, retryPolicy: number | null, updatedAt: string, rescue: { kernel: string } | null, status: { phase: ComponentPhase, status: ComponentStatus, statusOverride: StatusOverride }, actualState: { lastUpdated: string | null, bootArtifacts: { kernel: string, kernelParameters: string, initrd: string } }, desiredState: { configuration: string, lastUpdated: string | null, bootArtifacts: { kernel: string, kernelParameters: string, initrd: string } }, lastAction: { action: string, failed: boolean, lastUpdated: string | null }, eventStats: { powerOnAttempts: number, powerOffGracefulAttempts: number, powerOffForcefulAttempts: number }, powerDrift: { expected: string, actual: string, since: string } | null } | null, explain: { summary: string, waitingFor: WaitKind, nextOperator: string | null, next: string, nextAt: string | null, advice: string | null, suggestedAction: SuggestedAction, powerState: string | null, cfsDesiredConfig: string | null, cfsStatus: string | null, sessionPaused: boolean, sessionPauseReason: string | null, consoleTail: Array<string> | null, decision: { rule: string, phase: ComponentPhase, why: string } | null, criteria: Array<{ operator: string, criterion: string, met: boolean, detail: string }>, blockers: Array<{ kind: string, detail: string }>, quarantine: { since: string, failedSessions: number, threshold: number, summary: string } | null } | null };

export type ConsoleReleaseQuarantineMutationVariables = Exact<{
  ids: Array<string> | string;
}>;


export type ConsoleReleaseQuarantineMutation = { releaseQuarantine: { released: Array<string>, notQuarantined: Array<string> } };

export type ConsoleTimelineQueryVariables = Exact<{
  id: string;
  after?: string | null | undefined;
}>;


export type ConsoleTimelineQuery = { componentTimeline: { nextCursor: string | null, events: Array<{ cursor: string, at: string, kind: string, actor: string, fromPhase: string | null, toPhase: string | null, fromStatus: string | null, toStatus: string | null, action: string | null, error: string | null, reason: string | null, session: string }> } };

export type ConsoleSessionsQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleSessionsQuery = { sessions: Array<{ name: string, tenant: string | null, operation: SessionOperation, templateName: string, limit: string, paused: boolean, aborted: boolean, createdBy: string | null, result: SessionResult, resultText: string, status: { status: SessionState, startTime: string, endTime: string | null, error: string | null }, approval: { waiting: boolean } | null }> };

export type ConsoleProgressFragment = { name: string, status: SessionState, result: SessionResult, managedComponentsCount: number, percentSuccessful: number, percentFailed: number, paused: boolean, pauseReason: string | null, phases: { percentComplete: number, percentPoweringOn: number, percentPoweringOff: number, percentConfiguring: number }, failureReasons: Array<{ key: string, count: number, ids: Array<string>, list: string }>, retrying: Array<{ key: string, count: number, ids: Array<string> }>, blocked: Array<{ service: string, reason: string, since: string | null, count: number, ids: Array<string>, error: string }>, errorSummary: Array<{ key: string, count: number, list: string }>, timing: { duration: string } };

export type ConsoleSessionProgressSubscriptionVariables = Exact<{
  name: string;
}>;


export type ConsoleSessionProgressSubscription = { sessionProgress: { name: string, status: SessionState, result: SessionResult, managedComponentsCount: number, percentSuccessful: number, percentFailed: number, paused: boolean, pauseReason: string | null, phases: { percentComplete: number, percentPoweringOn: number, percentPoweringOff: number, percentConfiguring: number }, failureReasons: Array<{ key: string, count: number, ids: Array<string>, list: string }>, retrying: Array<{ key: string, count: number, ids: Array<string> }>, blocked: Array<{ service: string, reason: string, since: string | null, count: number, ids: Array<string>, error: string }>, errorSummary: Array<{ key: string, count: number, list: string }>, timing: { duration: string } } };

export type ConsoleApprovalFragment = { reason: string, waiting: boolean, approvedBy: string | null, approvedAt: string | null };

export type ConsoleApproveMutationVariables = Exact<{
  name: string;
}>;


export type ConsoleApproveMutation = { approveSession: { name: string, approval: { reason: string, waiting: boolean, approvedBy: string | null, approvedAt: string | null } | null } };

export type ConsoleSessionStatusQueryVariables = Exact<{
  name: string;
}>;


export type ConsoleSessionStatusQuery = { sessionStatus: { name: string, status: SessionState, result: SessionResult, managedComponentsCount: number, percentSuccessful: number, percentFailed: number, paused: boolean, pauseReason: string | null, phases: { percentComplete: number, percentPoweringOn: number, percentPoweringOff: number, percentConfiguring: number }, failureReasons: Array<{ key: string, count: number, ids: Array<string>, list: string }>, retrying: Array<{ key: string, count: number, ids: Array<string> }>, blocked: Array<{ service: string, reason: string, since: string | null, count: number, ids: Array<string>, error: string }>, errorSummary: Array<{ key: string, count: number, list: string }>, timing: { duration: string } } | null, session: { templateName: string, operation: SessionOperation, resultText: string, createdBy: string | null, approval: { reason: string, waiting: boolean, approvedBy: string | null, approvedAt: string | null } | null } | null, explainSession: { remaining: number, groups: Array<{ waitingFor: WaitKind, description: string, count: number, examples: Array<string> }> } | null };

export type ConsoleTemplatesQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleTemplatesQuery = { sessionTemplates: Array<{ name: string, tenant: string | null, description: string | null }> };

export type ConsolePlanQueryVariables = Exact<{
  input: CreateSessionInput;
}>;


export type ConsolePlanQuery = { planSession: { valid: boolean, setupError: string | null, errors: Array<{ field: string | null, message: string }>, warnings: Array<{ field: string | null, message: string }>, counts: { managed: number, skipped: number, powerCycle: number, powerOn: number, powerOff: number, configureOnly: number, nothing: number, unknown: number }, bootSets: Array<{ name: string, nodeCount: number, kernel: string, configuration: string }>, nodes: Array<{ id: string, action: PlannedAction, skipReason: SkipReason | null, detail: string }> } };

export type ConsoleCreateSessionMutationVariables = Exact<{
  input: CreateSessionInput;
}>;


export type ConsoleCreateSessionMutation = { createSession: { session: { name: string }, warnings: Array<{ field: string | null, message: string }> } };

export type ConsolePauseMutationVariables = Exact<{
  name: string;
}>;


export type ConsolePauseMutation = { pauseSession: { name: string, paused: boolean } };

export type ConsoleResumeMutationVariables = Exact<{
  name: string;
}>;


export type ConsoleResumeMutation = { resumeSession: { name: string, paused: boolean } };

export type ConsoleAbortMutationVariables = Exact<{
  name: string;
}>;


export type ConsoleAbortMutation = { abortSession: { stopped: Array<string>, session: { name: string, aborted: boolean } } };

export type ConsoleNodeHardwareQueryVariables = Exact<{
  id: string;
}>;


export type ConsoleNodeHardwareQuery = { nodes: Array<{ xname: string, inspectedAt: string | null, bmc: { driver: BmcDriver, address: string }, hardware: { manufacturer: string, model: string, serialNumber: string, cpuCount: number | null, cpuModel: string, memoryGiB: number | null, macs: Array<string>, biosVersion: string, bmcFirmwareVersion: string, disks: Array<{ name: string, model: string, capacityBytes: number }> } | null }> };

export const ConsoleProgressFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleProgress"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SessionExtendedStatus"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"result"}},{"kind":"Field","name":{"kind":"Name","value":"managedComponentsCount"}},{"kind":"Field","name":{"kind":"Name","value":"percentSuccessful"}},{"kind":"Field","name":{"kind":"Name","value":"percentFailed"}},{"kind":"Field","name":{"kind":"Name","value":"paused"}},{"kind":"Field","name":{"kind":"Name","value":"pauseReason"}},{"kind":"Field","name":{"kind":"Name","value":"phases"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"percentComplete"}},{"kind":"Field","name":{"kind":"Name","value":"percentPoweringOn"}},{"kind":"Field","name":{"kind":"Name","value":"percentPoweringOff"}},{"kind":"Field","name":{"kind":"Name","value":"percentConfiguring"}}]}},{"kind":"Field","name":{"kind":"Name","value":"failureReasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"list"}}]}},{"kind":"Field","name":{"kind":"Name","value":"retrying"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}}]}},{"kind":"Field","name":{"kind":"Name","value":"blocked"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"service"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"since"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"error"}}]}},{"kind":"Field","name":{"kind":"Name","value":"errorSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"list"}}]}},{"kind":"Field","name":{"kind":"Name","value":"timing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"duration"}}]}}]}}]} as unknown as DocumentNode<ConsoleProgressFragment, unknown>;
export const ConsoleApprovalFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleApproval"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SessionApproval"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"waiting"}},{"kind":"Field","name":{"kind":"Name","value":"approvedBy"}},{"kind":"Field","name":{"kind":"Name","value":"approvedAt"}}]}}]} as unknown as DocumentNode<ConsoleApprovalFragment, unknown>;
export const ConsoleNodeConsoleDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleNodeConsole"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"attempt"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodeConsole"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"componentId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"attempt"},"value":{"kind":"Variable","name":{"kind":"Name","value":"attempt"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"attempt"}},{"kind":"Field","name":{"kind":"Name","value":"text"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"attempts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"attempt"}},{"kind":"Field","name":{"kind":"Name","value":"bytes"}},{"kind":"Field","name":{"kind":"Name","value":"first"}},{"kind":"Field","name":{"kind":"Name","value":"last"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleNodeConsoleQuery, ConsoleNodeConsoleQueryVariables>;
export const ConsoleWhoamiDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleWhoami"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"whoami"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"subject"}},{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"tenant"}},{"kind":"Field","name":{"kind":"Name","value":"via"}}]}}]}}]} as unknown as DocumentNode<ConsoleWhoamiQuery, ConsoleWhoamiQueryVariables>;
export const ConsoleMachineMapDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleMachineMap"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"machineMap"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statuses"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"phases"}},{"kind":"Field","name":{"kind":"Name","value":"session"}},{"kind":"Field","name":{"kind":"Name","value":"sessions"}},{"kind":"Field","name":{"kind":"Name","value":"failureReason"}},{"kind":"Field","name":{"kind":"Name","value":"failureReasons"}}]}}]}}]} as unknown as DocumentNode<ConsoleMachineMapQuery, ConsoleMachineMapQueryVariables>;
export const ConsoleComponentEventBatchesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ConsoleComponentEventBatches"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"componentEventBatches"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"events"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"componentId"}},{"kind":"Field","name":{"kind":"Name","value":"session"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"toPhase"}},{"kind":"Field","name":{"kind":"Name","value":"toStatus"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"error"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleComponentEventBatchesSubscription, ConsoleComponentEventBatchesSubscriptionVariables>;
export const ConsoleNodeTableDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleNodeTable"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ComponentFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"orderBy"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ComponentOrder"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"descending"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"components"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"orderBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"orderBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"descending"},"value":{"kind":"Variable","name":{"kind":"Name","value":"descending"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"session"}},{"kind":"Field","name":{"kind":"Name","value":"failureReason"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"status"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"totalCount"}}]}}]}}]} as unknown as DocumentNode<ConsoleNodeTableQuery, ConsoleNodeTableQueryVariables>;
export const ConsoleNodeIdsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleNodeIds"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ComponentFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"components"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"10000"}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleNodeIdsQuery, ConsoleNodeIdsQueryVariables>;
export const ConsoleEnableNodesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleEnableNodes"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"ids"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"patchComponents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"ids"},"value":{"kind":"Variable","name":{"kind":"Name","value":"ids"}}}]}},{"kind":"Argument","name":{"kind":"Name","value":"patch"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"enabled"},"value":{"kind":"BooleanValue","value":true}},{"kind":"ObjectField","name":{"kind":"Name","value":"error"},"value":{"kind":"StringValue","value":"","block":false}},{"kind":"ObjectField","name":{"kind":"Name","value":"eventStats"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"powerOnAttempts"},"value":{"kind":"IntValue","value":"0"}},{"kind":"ObjectField","name":{"kind":"Name","value":"powerOffGracefulAttempts"},"value":{"kind":"IntValue","value":"0"}},{"kind":"ObjectField","name":{"kind":"Name","value":"powerOffForcefulAttempts"},"value":{"kind":"IntValue","value":"0"}}]}}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<ConsoleEnableNodesMutation, ConsoleEnableNodesMutationVariables>;
export const ConsoleSessionOriginDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleSessionOrigin"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"session"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"templateName"}},{"kind":"Field","name":{"kind":"Name","value":"operation"}}]}}]}}]} as unknown as DocumentNode<ConsoleSessionOriginQuery, ConsoleSessionOriginQueryVariables>;
export const ConsoleNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"component"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"failureReason"}},{"kind":"Field","name":{"kind":"Name","value":"session"}},{"kind":"Field","name":{"kind":"Name","value":"sessionTenant"}},{"kind":"Field","name":{"kind":"Name","value":"retryPolicy"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"rescue"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kernel"}}]}},{"kind":"Field","name":{"kind":"Name","value":"status"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusOverride"}}]}},{"kind":"Field","name":{"kind":"Name","value":"actualState"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"bootArtifacts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kernel"}},{"kind":"Field","name":{"kind":"Name","value":"kernelParameters"}},{"kind":"Field","name":{"kind":"Name","value":"initrd"}}]}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdated"}}]}},{"kind":"Field","name":{"kind":"Name","value":"desiredState"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"bootArtifacts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kernel"}},{"kind":"Field","name":{"kind":"Name","value":"kernelParameters"}},{"kind":"Field","name":{"kind":"Name","value":"initrd"}}]}},{"kind":"Field","name":{"kind":"Name","value":"configuration"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdated"}}]}},{"kind":"Field","name":{"kind":"Name","value":"lastAction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"action"}},{"kind":"Field","name":{"kind":"Name","value":"failed"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdated"}}]}},{"kind":"Field","name":{"kind":"Name","value":"eventStats"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"powerOnAttempts"}},{"kind":"Field","name":{"kind":"Name","value":"powerOffGracefulAttempts"}},{"kind":"Field","name":{"kind":"Name","value":"powerOffForcefulAttempts"}}]}},{"kind":"Field","name":{"kind":"Name","value":"powerDrift"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"expected"}},{"kind":"Field","name":{"kind":"Name","value":"actual"}},{"kind":"Field","name":{"kind":"Name","value":"since"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"explain"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"componentId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"summary"}},{"kind":"Field","name":{"kind":"Name","value":"waitingFor"}},{"kind":"Field","name":{"kind":"Name","value":"nextOperator"}},{"kind":"Field","name":{"kind":"Name","value":"next"}},{"kind":"Field","name":{"kind":"Name","value":"nextAt"}},{"kind":"Field","name":{"kind":"Name","value":"advice"}},{"kind":"Field","name":{"kind":"Name","value":"suggestedAction"}},{"kind":"Field","name":{"kind":"Name","value":"powerState"}},{"kind":"Field","name":{"kind":"Name","value":"cfsDesiredConfig"}},{"kind":"Field","name":{"kind":"Name","value":"cfsStatus"}},{"kind":"Field","name":{"kind":"Name","value":"sessionPaused"}},{"kind":"Field","name":{"kind":"Name","value":"sessionPauseReason"}},{"kind":"Field","name":{"kind":"Name","value":"decision"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rule"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"why"}}]}},{"kind":"Field","name":{"kind":"Name","value":"criteria"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operator"}},{"kind":"Field","name":{"kind":"Name","value":"criterion"}},{"kind":"Field","name":{"kind":"Name","value":"met"}},{"kind":"Field","name":{"kind":"Name","value":"detail"}}]}},{"kind":"Field","name":{"kind":"Name","value":"blockers"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"detail"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quarantine"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"since"}},{"kind":"Field","name":{"kind":"Name","value":"failedSessions"}},{"kind":"Field","name":{"kind":"Name","value":"threshold"}},{"kind":"Field","name":{"kind":"Name","value":"summary"}}]}},{"kind":"Field","name":{"kind":"Name","value":"consoleTail"}}]}}]}}]} as unknown as DocumentNode<ConsoleNodeQuery, ConsoleNodeQueryVariables>;
export const ConsoleReleaseQuarantineDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleReleaseQuarantine"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"ids"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"releaseQuarantine"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"ids"},"value":{"kind":"Variable","name":{"kind":"Name","value":"ids"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"released"}},{"kind":"Field","name":{"kind":"Name","value":"notQuarantined"}}]}}]}}]} as unknown as DocumentNode<ConsoleReleaseQuarantineMutation, ConsoleReleaseQuarantineMutationVariables>;
export const ConsoleTimelineDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleTimeline"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"componentTimeline"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"componentId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"200"}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"events"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"fromPhase"}},{"kind":"Field","name":{"kind":"Name","value":"toPhase"}},{"kind":"Field","name":{"kind":"Name","value":"fromStatus"}},{"kind":"Field","name":{"kind":"Name","value":"toStatus"}},{"kind":"Field","name":{"kind":"Name","value":"action"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"session"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nextCursor"}}]}}]}}]} as unknown as DocumentNode<ConsoleTimelineQuery, ConsoleTimelineQueryVariables>;
export const ConsoleSessionsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleSessions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"tenant"}},{"kind":"Field","name":{"kind":"Name","value":"operation"}},{"kind":"Field","name":{"kind":"Name","value":"templateName"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}},{"kind":"Field","name":{"kind":"Name","value":"paused"}},{"kind":"Field","name":{"kind":"Name","value":"aborted"}},{"kind":"Field","name":{"kind":"Name","value":"createdBy"}},{"kind":"Field","name":{"kind":"Name","value":"result"}},{"kind":"Field","name":{"kind":"Name","value":"resultText"}},{"kind":"Field","name":{"kind":"Name","value":"status"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"startTime"}},{"kind":"Field","name":{"kind":"Name","value":"endTime"}},{"kind":"Field","name":{"kind":"Name","value":"error"}}]}},{"kind":"Field","name":{"kind":"Name","value":"approval"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"waiting"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleSessionsQuery, ConsoleSessionsQueryVariables>;
export const ConsoleSessionProgressDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ConsoleSessionProgress"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessionProgress"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleProgress"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleProgress"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SessionExtendedStatus"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"result"}},{"kind":"Field","name":{"kind":"Name","value":"managedComponentsCount"}},{"kind":"Field","name":{"kind":"Name","value":"percentSuccessful"}},{"kind":"Field","name":{"kind":"Name","value":"percentFailed"}},{"kind":"Field","name":{"kind":"Name","value":"paused"}},{"kind":"Field","name":{"kind":"Name","value":"pauseReason"}},{"kind":"Field","name":{"kind":"Name","value":"phases"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"percentComplete"}},{"kind":"Field","name":{"kind":"Name","value":"percentPoweringOn"}},{"kind":"Field","name":{"kind":"Name","value":"percentPoweringOff"}},{"kind":"Field","name":{"kind":"Name","value":"percentConfiguring"}}]}},{"kind":"Field","name":{"kind":"Name","value":"failureReasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"list"}}]}},{"kind":"Field","name":{"kind":"Name","value":"retrying"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}}]}},{"kind":"Field","name":{"kind":"Name","value":"blocked"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"service"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"since"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"error"}}]}},{"kind":"Field","name":{"kind":"Name","value":"errorSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"list"}}]}},{"kind":"Field","name":{"kind":"Name","value":"timing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"duration"}}]}}]}}]} as unknown as DocumentNode<ConsoleSessionProgressSubscription, ConsoleSessionProgressSubscriptionVariables>;
export const ConsoleApproveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleApprove"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"approveSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"approval"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleApproval"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleApproval"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SessionApproval"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"waiting"}},{"kind":"Field","name":{"kind":"Name","value":"approvedBy"}},{"kind":"Field","name":{"kind":"Name","value":"approvedAt"}}]}}]} as unknown as DocumentNode<ConsoleApproveMutation, ConsoleApproveMutationVariables>;
export const ConsoleSessionStatusDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleSessionStatus"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessionStatus"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleProgress"}}]}},{"kind":"Field","name":{"kind":"Name","value":"session"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"templateName"}},{"kind":"Field","name":{"kind":"Name","value":"operation"}},{"kind":"Field","name":{"kind":"Name","value":"resultText"}},{"kind":"Field","name":{"kind":"Name","value":"createdBy"}},{"kind":"Field","name":{"kind":"Name","value":"approval"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleApproval"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"explainSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"remaining"}},{"kind":"Field","name":{"kind":"Name","value":"groups"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"waitingFor"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"examples"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleProgress"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SessionExtendedStatus"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"result"}},{"kind":"Field","name":{"kind":"Name","value":"managedComponentsCount"}},{"kind":"Field","name":{"kind":"Name","value":"percentSuccessful"}},{"kind":"Field","name":{"kind":"Name","value":"percentFailed"}},{"kind":"Field","name":{"kind":"Name","value":"paused"}},{"kind":"Field","name":{"kind":"Name","value":"pauseReason"}},{"kind":"Field","name":{"kind":"Name","value":"phases"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"percentComplete"}},{"kind":"Field","name":{"kind":"Name","value":"percentPoweringOn"}},{"kind":"Field","name":{"kind":"Name","value":"percentPoweringOff"}},{"kind":"Field","name":{"kind":"Name","value":"percentConfiguring"}}]}},{"kind":"Field","name":{"kind":"Name","value":"failureReasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"list"}}]}},{"kind":"Field","name":{"kind":"Name","value":"retrying"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}}]}},{"kind":"Field","name":{"kind":"Name","value":"blocked"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"service"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"since"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"ids"}},{"kind":"Field","name":{"kind":"Name","value":"error"}}]}},{"kind":"Field","name":{"kind":"Name","value":"errorSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"list"}}]}},{"kind":"Field","name":{"kind":"Name","value":"timing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"duration"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleApproval"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SessionApproval"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"waiting"}},{"kind":"Field","name":{"kind":"Name","value":"approvedBy"}},{"kind":"Field","name":{"kind":"Name","value":"approvedAt"}}]}}]} as unknown as DocumentNode<ConsoleSessionStatusQuery, ConsoleSessionStatusQueryVariables>;
export const ConsoleTemplatesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleTemplates"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessionTemplates"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"tenant"}},{"kind":"Field","name":{"kind":"Name","value":"description"}}]}}]}}]} as unknown as DocumentNode<ConsoleTemplatesQuery, ConsoleTemplatesQueryVariables>;
export const ConsolePlanDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsolePlan"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateSessionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"planSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"valid"}},{"kind":"Field","name":{"kind":"Name","value":"setupError"}},{"kind":"Field","name":{"kind":"Name","value":"errors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}},{"kind":"Field","name":{"kind":"Name","value":"warnings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"managed"}},{"kind":"Field","name":{"kind":"Name","value":"skipped"}},{"kind":"Field","name":{"kind":"Name","value":"powerCycle"}},{"kind":"Field","name":{"kind":"Name","value":"powerOn"}},{"kind":"Field","name":{"kind":"Name","value":"powerOff"}},{"kind":"Field","name":{"kind":"Name","value":"configureOnly"}},{"kind":"Field","name":{"kind":"Name","value":"nothing"}},{"kind":"Field","name":{"kind":"Name","value":"unknown"}}]}},{"kind":"Field","name":{"kind":"Name","value":"bootSets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"kernel"}},{"kind":"Field","name":{"kind":"Name","value":"configuration"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"action"}},{"kind":"Field","name":{"kind":"Name","value":"skipReason"}},{"kind":"Field","name":{"kind":"Name","value":"detail"}}]}}]}}]}}]} as unknown as DocumentNode<ConsolePlanQuery, ConsolePlanQueryVariables>;
export const ConsoleCreateSessionDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleCreateSession"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateSessionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"session"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"warnings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleCreateSessionMutation, ConsoleCreateSessionMutationVariables>;
export const ConsolePauseDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsolePause"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pauseSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}},{"kind":"Argument","name":{"kind":"Name","value":"reason"},"value":{"kind":"StringValue","value":"paused from the console","block":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"paused"}}]}}]}}]} as unknown as DocumentNode<ConsolePauseMutation, ConsolePauseMutationVariables>;
export const ConsoleResumeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleResume"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resumeSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"paused"}}]}}]}}]} as unknown as DocumentNode<ConsoleResumeMutation, ConsoleResumeMutationVariables>;
export const ConsoleAbortDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleAbort"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"abortSession"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"session"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"aborted"}}]}},{"kind":"Field","name":{"kind":"Name","value":"stopped"}}]}}]}}]} as unknown as DocumentNode<ConsoleAbortMutation, ConsoleAbortMutationVariables>;
export const ConsoleNodeHardwareDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleNodeHardware"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"xnames"},"value":{"kind":"ListValue","values":[{"kind":"Variable","name":{"kind":"Name","value":"id"}}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"xname"}},{"kind":"Field","name":{"kind":"Name","value":"inspectedAt"}},{"kind":"Field","name":{"kind":"Name","value":"bmc"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"driver"}},{"kind":"Field","name":{"kind":"Name","value":"address"}}]}},{"kind":"Field","name":{"kind":"Name","value":"hardware"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"manufacturer"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"serialNumber"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"cpuModel"}},{"kind":"Field","name":{"kind":"Name","value":"memoryGiB"}},{"kind":"Field","name":{"kind":"Name","value":"macs"}},{"kind":"Field","name":{"kind":"Name","value":"biosVersion"}},{"kind":"Field","name":{"kind":"Name","value":"bmcFirmwareVersion"}},{"kind":"Field","name":{"kind":"Name","value":"disks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"capacityBytes"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleNodeHardwareQuery, ConsoleNodeHardwareQueryVariables>;