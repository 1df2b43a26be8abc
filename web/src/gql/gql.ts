/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query ConsoleNodeConsole($id: ID!, $attempt: DateTime, $after: String, $search: String) {\n    nodeConsole(componentId: $id, attempt: $attempt, after: $after, search: $search) {\n      attempt text cursor attempts { attempt bytes first last }\n    }\n  }\n": typeof types.ConsoleNodeConsoleDocument,
    "\n  query ConsoleWhoami { whoami { subject role tenant via } }\n": typeof types.ConsoleWhoamiDocument,
    "\n  query ConsoleMachineMap {\n    machineMap { cursor ids status statuses phase phases session sessions failureReason failureReasons }\n  }\n": typeof types.ConsoleMachineMapDocument,
    "\n  subscription ConsoleComponentEventBatches($after: ID) {\n    componentEventBatches(after: $after) {\n      cursor\n      events { cursor at componentId session kind toPhase toStatus reason error }\n    }\n  }\n": typeof types.ConsoleComponentEventBatchesDocument,
    "\n  query ConsoleNodeTable($filter: ComponentFilter, $first: Int!, $after: String, $orderBy: ComponentOrder, $descending: Boolean) {\n    components(filter: $filter, first: $first, after: $after, orderBy: $orderBy, descending: $descending) {\n      nodes { id enabled session failureReason error updatedAt status { phase status } }\n      pageInfo { hasNextPage endCursor }\n      totalCount\n    }\n  }\n": typeof types.ConsoleNodeTableDocument,
    "\n  query ConsoleNodeIds($filter: ComponentFilter, $after: String) {\n    components(filter: $filter, first: 10000, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } }\n  }\n": typeof types.ConsoleNodeIdsDocument,
    "\n  mutation ConsoleEnableNodes($ids: [ID!]!) {\n    patchComponents(filter: { ids: $ids }, patch: { enabled: true, error: \"\", eventStats: { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 } }) { id }\n  }\n": typeof types.ConsoleEnableNodesDocument,
    "\n  query ConsoleSessionOrigin($name: String!) { session(name: $name) { name templateName operation } }\n": typeof types.ConsoleSessionOriginDocument,
    "\n  query ConsoleNode($id: ID!) {\n    component(id: $id) {\n      id enabled error failureReason session sessionTenant retryPolicy updatedAt rescue { kernel }\n      status { phase status statusOverride }\n      actualState { bootArtifacts { kernel kernelParameters initrd } lastUpdated }\n      desiredState { bootArtifacts { kernel kernelParameters initrd } configuration lastUpdated }\n      lastAction { action failed lastUpdated }\n      eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }\n      powerDrift { expected actual since }\n    }\n    explain(componentId: $id) {\n      summary waitingFor nextOperator next nextAt advice suggestedAction powerState cfsDesiredConfig cfsStatus sessionPaused sessionPauseReason\n      decision { rule phase why }\n      criteria { operator criterion met detail }\n      blockers { kind detail }\n      quarantine { since failedSessions threshold summary }\n      consoleTail\n    }\n  }\n": typeof types.ConsoleNodeDocument,
    "\n  mutation ConsoleReleaseQuarantine($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }\n": typeof types.ConsoleReleaseQuarantineDocument,
    "\n  query ConsoleTimeline($id: ID!, $after: String) {\n    componentTimeline(componentId: $id, first: 200, after: $after) {\n      events { cursor at kind actor fromPhase toPhase fromStatus toStatus action error reason session }\n      nextCursor\n    }\n  }\n": typeof types.ConsoleTimelineDocument,
    "\n  query ConsoleSessions {\n    sessions { name tenant operation templateName limit paused aborted createdBy result resultText status { status startTime endTime error } approval { waiting } }\n  }\n": typeof types.ConsoleSessionsDocument,
    "\n  fragment ConsoleProgress on SessionExtendedStatus {\n    name status result managedComponentsCount percentSuccessful percentFailed paused pauseReason\n    phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }\n    failureReasons { key count ids list }\n    retrying { key count ids }\n    blocked { service reason since count ids error }\n    errorSummary { key count list }\n    timing { duration }\n  }\n": typeof types.ConsoleProgressFragmentDoc,
    "\n  subscription ConsoleSessionProgress($name: String!) {\n    sessionProgress(name: $name) { ...ConsoleProgress }\n  }\n": typeof types.ConsoleSessionProgressDocument,
    "\n  fragment ConsoleApproval on SessionApproval { reason waiting approvedBy approvedAt }\n": typeof types.ConsoleApprovalFragmentDoc,
    "\n  mutation ConsoleApprove($name: String!) { approveSession(name: $name) { name approval { ...ConsoleApproval } } }\n": typeof types.ConsoleApproveDocument,
    "\n  query ConsoleSessionStatus($name: String!) {\n    sessionStatus(name: $name) { ...ConsoleProgress }\n    session(name: $name) { templateName operation resultText createdBy approval { ...ConsoleApproval } }\n    explainSession(name: $name) { remaining groups { waitingFor description count examples } }\n  }\n": typeof types.ConsoleSessionStatusDocument,
    "\n  query ConsoleTemplates { sessionTemplates { name tenant description } }\n": typeof types.ConsoleTemplatesDocument,
    "\n  query ConsolePlan($input: CreateSessionInput!) {\n    planSession(input: $input) {\n      valid setupError\n      errors { field message }\n      warnings { field message }\n      counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }\n      bootSets { name nodeCount kernel configuration }\n      nodes { id action skipReason detail }\n    }\n  }\n": typeof types.ConsolePlanDocument,
    "\n  mutation ConsoleCreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) { session { name } warnings { field message } }\n  }\n": typeof types.ConsoleCreateSessionDocument,
    "\n  mutation ConsolePause($name: String!) { pauseSession(name: $name, reason: \"paused from the console\") { name paused } }\n": typeof types.ConsolePauseDocument,
    "\n  mutation ConsoleResume($name: String!) { resumeSession(name: $name) { name paused } }\n": typeof types.ConsoleResumeDocument,
    "\n  mutation ConsoleAbort($name: String!) { abortSession(name: $name) { session { name aborted } stopped } }\n": typeof types.ConsoleAbortDocument,
    "\n  query ConsoleNodeHardware($id: ID!) {\n    nodes(xnames: [$id]) {\n      xname inspectedAt\n      bmc { driver address }\n      hardware { manufacturer model serialNumber cpuCount cpuModel memoryGiB macs biosVersion bmcFirmwareVersion disks { name model capacityBytes } }\n    }\n  }\n": typeof types.ConsoleNodeHardwareDocument,
};
const documents: Documents = {
    "\n  query ConsoleNodeConsole($id: ID!, $attempt: DateTime, $after: String, $search: String) {\n    nodeConsole(componentId: $id, attempt: $attempt, after: $after, search: $search) {\n      attempt text cursor attempts { attempt bytes first last }\n    }\n  }\n": types.ConsoleNodeConsoleDocument,
    "\n  query ConsoleWhoami { whoami { subject role tenant via } }\n": types.ConsoleWhoamiDocument,
    "\n  query ConsoleMachineMap {\n    machineMap { cursor ids status statuses phase phases session sessions failureReason failureReasons }\n  }\n": types.ConsoleMachineMapDocument,
    "\n  subscription ConsoleComponentEventBatches($after: ID) {\n    componentEventBatches(after: $after) {\n      cursor\n      events { cursor at componentId session kind toPhase toStatus reason error }\n    }\n  }\n": types.ConsoleComponentEventBatchesDocument,
    "\n  query ConsoleNodeTable($filter: ComponentFilter, $first: Int!, $after: String, $orderBy: ComponentOrder, $descending: Boolean) {\n    components(filter: $filter, first: $first, after: $after, orderBy: $orderBy, descending: $descending) {\n      nodes { id enabled session failureReason error updatedAt status { phase status } }\n      pageInfo { hasNextPage endCursor }\n      totalCount\n    }\n  }\n": types.ConsoleNodeTableDocument,
    "\n  query ConsoleNodeIds($filter: ComponentFilter, $after: String) {\n    components(filter: $filter, first: 10000, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } }\n  }\n": types.ConsoleNodeIdsDocument,
    "\n  mutation ConsoleEnableNodes($ids: [ID!]!) {\n    patchComponents(filter: { ids: $ids }, patch: { enabled: true, error: \"\", eventStats: { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 } }) { id }\n  }\n": types.ConsoleEnableNodesDocument,
    "\n  query ConsoleSessionOrigin($name: String!) { session(name: $name) { name templateName operation } }\n": types.ConsoleSessionOriginDocument,
    "\n  query ConsoleNode($id: ID!) {\n    component(id: $id) {\n      id enabled error failureReason session sessionTenant retryPolicy updatedAt rescue { kernel }\n      status { phase status statusOverride }\n      actualState { bootArtifacts { kernel kernelParameters initrd } lastUpdated }\n      desiredState { bootArtifacts { kernel kernelParameters initrd } configuration lastUpdated }\n      lastAction { action failed lastUpdated }\n      eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }\n      powerDrift { expected actual since }\n    }\n    explain(componentId: $id) {\n      summary waitingFor nextOperator next nextAt advice suggestedAction powerState cfsDesiredConfig cfsStatus sessionPaused sessionPauseReason\n      decision { rule phase why }\n      criteria { operator criterion met detail }\n      blockers { kind detail }\n      quarantine { since failedSessions threshold summary }\n      consoleTail\n    }\n  }\n": types.ConsoleNodeDocument,
    "\n  mutation ConsoleReleaseQuarantine($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }\n": types.ConsoleReleaseQuarantineDocument,
    "\n  query ConsoleTimeline($id: ID!, $after: String) {\n    componentTimeline(componentId: $id, first: 200, after: $after) {\n      events { cursor at kind actor fromPhase toPhase fromStatus toStatus action error reason session }\n      nextCursor\n    }\n  }\n": types.ConsoleTimelineDocument,
    "\n  query ConsoleSessions {\n    sessions { name tenant operation templateName limit paused aborted createdBy result resultText status { status startTime endTime error } approval { waiting } }\n  }\n": types.ConsoleSessionsDocument,
    "\n  fragment ConsoleProgress on SessionExtendedStatus {\n    name status result managedComponentsCount percentSuccessful percentFailed paused pauseReason\n    phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }\n    failureReasons { key count ids list }\n    retrying { key count ids }\n    blocked { service reason since count ids error }\n    errorSummary { key count list }\n    timing { duration }\n  }\n": types.ConsoleProgressFragmentDoc,
    "\n  subscription ConsoleSessionProgress($name: String!) {\n    sessionProgress(name: $name) { ...ConsoleProgress }\n  }\n": types.ConsoleSessionProgressDocument,
    "\n  fragment ConsoleApproval on SessionApproval { reason waiting approvedBy approvedAt }\n": types.ConsoleApprovalFragmentDoc,
    "\n  mutation ConsoleApprove($name: String!) { approveSession(name: $name) { name approval { ...ConsoleApproval } } }\n": types.ConsoleApproveDocument,
    "\n  query ConsoleSessionStatus($name: String!) {\n    sessionStatus(name: $name) { ...ConsoleProgress }\n    session(name: $name) { templateName operation resultText createdBy approval { ...ConsoleApproval } }\n    explainSession(name: $name) { remaining groups { waitingFor description count examples } }\n  }\n": types.ConsoleSessionStatusDocument,
    "\n  query ConsoleTemplates { sessionTemplates { name tenant description } }\n": types.ConsoleTemplatesDocument,
    "\n  query ConsolePlan($input: CreateSessionInput!) {\n    planSession(input: $input) {\n      valid setupError\n      errors { field message }\n      warnings { field message }\n      counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }\n      bootSets { name nodeCount kernel configuration }\n      nodes { id action skipReason detail }\n    }\n  }\n": types.ConsolePlanDocument,
    "\n  mutation ConsoleCreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) { session { name } warnings { field message } }\n  }\n": types.ConsoleCreateSessionDocument,
    "\n  mutation ConsolePause($name: String!) { pauseSession(name: $name, reason: \"paused from the console\") { name paused } }\n": types.ConsolePauseDocument,
    "\n  mutation ConsoleResume($name: String!) { resumeSession(name: $name) { name paused } }\n": types.ConsoleResumeDocument,
    "\n  mutation ConsoleAbort($name: String!) { abortSession(name: $name) { session { name aborted } stopped } }\n": types.ConsoleAbortDocument,
    "\n  query ConsoleNodeHardware($id: ID!) {\n    nodes(xnames: [$id]) {\n      xname inspectedAt\n      bmc { driver address }\n      hardware { manufacturer model serialNumber cpuCount cpuModel memoryGiB macs biosVersion bmcFirmwareVersion disks { name model capacityBytes } }\n    }\n  }\n": types.ConsoleNodeHardwareDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleNodeConsole($id: ID!, $attempt: DateTime, $after: String, $search: String) {\n    nodeConsole(componentId: $id, attempt: $attempt, after: $after, search: $search) {\n      attempt text cursor attempts { attempt bytes first last }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleNodeConsole($id: ID!, $attempt: DateTime, $after: String, $search: String) {\n    nodeConsole(componentId: $id, attempt: $attempt, after: $after, search: $search) {\n      attempt text cursor attempts { attempt bytes first last }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleWhoami { whoami { subject role tenant via } }\n"): (typeof documents)["\n  query ConsoleWhoami { whoami { subject role tenant via } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleMachineMap {\n    machineMap { cursor ids status statuses phase phases session sessions failureReason failureReasons }\n  }\n"): (typeof documents)["\n  query ConsoleMachineMap {\n    machineMap { cursor ids status statuses phase phases session sessions failureReason failureReasons }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleComponentEventBatches($after: ID) {\n    componentEventBatches(after: $after) {\n      cursor\n      events { cursor at componentId session kind toPhase toStatus reason error }\n    }\n  }\n"): (typeof documents)["\n  subscription ConsoleComponentEventBatches($after: ID) {\n    componentEventBatches(after: $after) {\n      cursor\n      events { cursor at componentId session kind toPhase toStatus reason error }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleNodeTable($filter: ComponentFilter, $first: Int!, $after: String, $orderBy: ComponentOrder, $descending: Boolean) {\n    components(filter: $filter, first: $first, after: $after, orderBy: $orderBy, descending: $descending) {\n      nodes { id enabled session failureReason error updatedAt status { phase status } }\n      pageInfo { hasNextPage endCursor }\n      totalCount\n    }\n  }\n"): (typeof documents)["\n  query ConsoleNodeTable($filter: ComponentFilter, $first: Int!, $after: String, $orderBy: ComponentOrder, $descending: Boolean) {\n    components(filter: $filter, first: $first, after: $after, orderBy: $orderBy, descending: $descending) {\n      nodes { id enabled session failureReason error updatedAt status { phase status } }\n      pageInfo { hasNextPage endCursor }\n      totalCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleNodeIds($filter: ComponentFilter, $after: String) {\n    components(filter: $filter, first: 10000, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } }\n  }\n"): (typeof documents)["\n  query ConsoleNodeIds($filter: ComponentFilter, $after: String) {\n    components(filter: $filter, first: 10000, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleEnableNodes($ids: [ID!]!) {\n    patchComponents(filter: { ids: $ids }, patch: { enabled: true, error: \"\", eventStats: { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 } }) { id }\n  }\n"): (typeof documents)["\n  mutation ConsoleEnableNodes($ids: [ID!]!) {\n    patchComponents(filter: { ids: $ids }, patch: { enabled: true, error: \"\", eventStats: { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 } }) { id }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleSessionOrigin($name: String!) { session(name: $name) { name templateName operation } }\n"): (typeof documents)["\n  query ConsoleSessionOrigin($name: String!) { session(name: $name) { name templateName operation } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleNode($id: ID!) {\n    component(id: $id) {\n      id enabled error failureReason session sessionTenant retryPolicy updatedAt rescue { kernel }\n      status { phase status statusOverride }\n      actualState { bootArtifacts { kernel kernelParameters initrd } lastUpdated }\n      desiredState { bootArtifacts { kernel kernelParameters initrd } configuration lastUpdated }\n      lastAction { action failed lastUpdated }\n      eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }\n      powerDrift { expected actual since }\n    }\n    explain(componentId: $id) {\n      summary waitingFor nextOperator next nextAt advice suggestedAction powerState cfsDesiredConfig cfsStatus sessionPaused sessionPauseReason\n      decision { rule phase why }\n      criteria { operator criterion met detail }\n      blockers { kind detail }\n      quarantine { since failedSessions threshold summary }\n      consoleTail\n    }\n  }\n"): (typeof documents)["\n  query ConsoleNode($id: ID!) {\n    component(id: $id) {\n      id enabled error failureReason session sessionTenant retryPolicy updatedAt rescue { kernel }\n      status { phase status statusOverride }\n      actualState { bootArtifacts { kernel kernelParameters initrd } lastUpdated }\n      desiredState { bootArtifacts { kernel kernelParameters initrd } configuration lastUpdated }\n      lastAction { action failed lastUpdated }\n      eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }\n      powerDrift { expected actual since }\n    }\n    explain(componentId: $id) {\n      summary waitingFor nextOperator next nextAt advice suggestedAction powerState cfsDesiredConfig cfsStatus sessionPaused sessionPauseReason\n      decision { rule phase why }\n      criteria { operator criterion met detail }\n      blockers { kind detail }\n      quarantine { since failedSessions threshold summary }\n      consoleTail\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleReleaseQuarantine($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }\n"): (typeof documents)["\n  mutation ConsoleReleaseQuarantine($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleTimeline($id: ID!, $after: String) {\n    componentTimeline(componentId: $id, first: 200, after: $after) {\n      events { cursor at kind actor fromPhase toPhase fromStatus toStatus action error reason session }\n      nextCursor\n    }\n  }\n"): (typeof documents)["\n  query ConsoleTimeline($id: ID!, $after: String) {\n    componentTimeline(componentId: $id, first: 200, after: $after) {\n      events { cursor at kind actor fromPhase toPhase fromStatus toStatus action error reason session }\n      nextCursor\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleSessions {\n    sessions { name tenant operation templateName limit paused aborted createdBy result resultText status { status startTime endTime error } approval { waiting } }\n  }\n"): (typeof documents)["\n  query ConsoleSessions {\n    sessions { name tenant operation templateName limit paused aborted createdBy result resultText status { status startTime endTime error } approval { waiting } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConsoleProgress on SessionExtendedStatus {\n    name status result managedComponentsCount percentSuccessful percentFailed paused pauseReason\n    phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }\n    failureReasons { key count ids list }\n    retrying { key count ids }\n    blocked { service reason since count ids error }\n    errorSummary { key count list }\n    timing { duration }\n  }\n"): (typeof documents)["\n  fragment ConsoleProgress on SessionExtendedStatus {\n    name status result managedComponentsCount percentSuccessful percentFailed paused pauseReason\n    phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }\n    failureReasons { key count ids list }\n    retrying { key count ids }\n    blocked { service reason since count ids error }\n    errorSummary { key count list }\n    timing { duration }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleSessionProgress($name: String!) {\n    sessionProgress(name: $name) { ...ConsoleProgress }\n  }\n"): (typeof documents)["\n  subscription ConsoleSessionProgress($name: String!) {\n    sessionProgress(name: $name) { ...ConsoleProgress }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConsoleApproval on SessionApproval { reason waiting approvedBy approvedAt }\n"): (typeof documents)["\n  fragment ConsoleApproval on SessionApproval { reason waiting approvedBy approvedAt }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleApprove($name: String!) { approveSession(name: $name) { name approval { ...ConsoleApproval } } }\n"): (typeof documents)["\n  mutation ConsoleApprove($name: String!) { approveSession(name: $name) { name approval { ...ConsoleApproval } } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleSessionStatus($name: String!) {\n    sessionStatus(name: $name) { ...ConsoleProgress }\n    session(name: $name) { templateName operation resultText createdBy approval { ...ConsoleApproval } }\n    explainSession(name: $name) { remaining groups { waitingFor description count examples } }\n  }\n"): (typeof documents)["\n  query ConsoleSessionStatus($name: String!) {\n    sessionStatus(name: $name) { ...ConsoleProgress }\n    session(name: $name) { templateName operation resultText createdBy approval { ...ConsoleApproval } }\n    explainSession(name: $name) { remaining groups { waitingFor description count examples } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleTemplates { sessionTemplates { name tenant description } }\n"): (typeof documents)["\n  query ConsoleTemplates { sessionTemplates { name tenant description } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsolePlan($input: CreateSessionInput!) {\n    planSession(input: $input) {\n      valid setupError\n      errors { field message }\n      warnings { field message }\n      counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }\n      bootSets { name nodeCount kernel configuration }\n      nodes { id action skipReason detail }\n    }\n  }\n"): (typeof documents)["\n  query ConsolePlan($input: CreateSessionInput!) {\n    planSession(input: $input) {\n      valid setupError\n      errors { field message }\n      warnings { field message }\n      counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }\n      bootSets { name nodeCount kernel configuration }\n      nodes { id action skipReason detail }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) { session { name } warnings { field message } }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) { session { name } warnings { field message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsolePause($name: String!) { pauseSession(name: $name, reason: \"paused from the console\") { name paused } }\n"): (typeof documents)["\n  mutation ConsolePause($name: String!) { pauseSession(name: $name, reason: \"paused from the console\") { name paused } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleResume($name: String!) { resumeSession(name: $name) { name paused } }\n"): (typeof documents)["\n  mutation ConsoleResume($name: String!) { resumeSession(name: $name) { name paused } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleAbort($name: String!) { abortSession(name: $name) { session { name aborted } stopped } }\n"): (typeof documents)["\n  mutation ConsoleAbort($name: String!) { abortSession(name: $name) { session { name aborted } stopped } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleNodeHardware($id: ID!) {\n    nodes(xnames: [$id]) {\n      xname inspectedAt\n      bmc { driver address }\n      hardware { manufacturer model serialNumber cpuCount cpuModel memoryGiB macs biosVersion bmcFirmwareVersion disks { name model capacityBytes } }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleNodeHardware($id: ID!) {\n    nodes(xnames: [$id]) {\n      xname inspectedAt\n      bmc { driver address }\n      hardware { manufacturer model serialNumber cpuCount cpuModel memoryGiB macs biosVersion bmcFirmwareVersion disks { name model capacityBytes } }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;