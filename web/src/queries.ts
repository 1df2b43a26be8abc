/**
 * Every operation the console sends, typed by graphql-codegen from schema/*.graphql (npm run codegen
 * writes web/src/gql). The console uses only the public API: what it shows, any client could show.
 */
import { graphql } from './gql/index.ts';

export const WhoamiQuery = graphql(`
  query ConsoleWhoami { whoami { subject role tenant via } }
`);

/** The map's snapshot: columns of dictionary indexes, and the log cursor it includes every change up to. */
export const MachineMapQuery = graphql(`
  query ConsoleMachineMap {
    machineMap { cursor ids status statuses phase phases session sessions failureReason failureReasons }
  }
`);

/** The map's live feed from the snapshot's cursor: the events of a short window as one message. */
export const ComponentEventBatchesSubscription = graphql(`
  subscription ConsoleComponentEventBatches($after: ID) {
    componentEventBatches(after: $after) {
      cursor
      events { cursor at componentId session kind toPhase toStatus reason error }
    }
  }
`);

/** The node table: one page of the search, filtered and sorted by the API (keyset on indexed columns). */
export const NodeTableQuery = graphql(`
  query ConsoleNodeTable($filter: ComponentFilter, $first: Int!, $after: String, $orderBy: ComponentOrder, $descending: Boolean) {
    components(filter: $filter, first: $first, after: $after, orderBy: $orderBy, descending: $descending) {
      nodes { id enabled session failureReason error updatedAt status { phase status } }
      pageInfo { hasNextPage endCursor }
      totalCount
    }
  }
`);

/** Ids only, for the map's search highlight and "retry all failed of a session". */
export const NodeIdsQuery = graphql(`
  query ConsoleNodeIds($filter: ComponentFilter, $after: String) {
    components(filter: $filter, first: 10000, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } }
  }
`);

/** Clear a failure and enable: the operators take the nodes from where they are toward their desired state. */
export const EnableNodesMutation = graphql(`
  mutation ConsoleEnableNodes($ids: [ID!]!) {
    patchComponents(filter: { ids: $ids }, patch: { enabled: true, error: "", eventStats: { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 } }) { id }
  }
`);

/** A session's template and operation, for retrying its nodes. */
export const SessionOriginQuery = graphql(`
  query ConsoleSessionOrigin($name: String!) { session(name: $name) { name templateName operation } }
`);

export const NodeQuery = graphql(`
  query ConsoleNode($id: ID!) {
    component(id: $id) {
      id enabled error failureReason session sessionTenant retryPolicy updatedAt rescue { kernel }
      status { phase status statusOverride }
      actualState { bootArtifacts { kernel kernelParameters initrd } lastUpdated }
      desiredState { bootArtifacts { kernel kernelParameters initrd } configuration lastUpdated }
      lastAction { action failed lastUpdated }
      eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }
      powerDrift { expected actual since }
    }
    explain(componentId: $id) {
      summary waitingFor nextOperator next nextAt advice suggestedAction powerState cfsDesiredConfig cfsStatus sessionPaused sessionPauseReason
      decision { rule phase why }
      criteria { operator criterion met detail }
      blockers { kind detail }
      quarantine { since failedSessions threshold summary }
      consoleTail
    }
  }
`);

/** Release quarantined nodes: new sessions include them again (docs/quarantine.md). */
export const ReleaseQuarantineMutation = graphql(`
  mutation ConsoleReleaseQuarantine($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }
`);

export const TimelineQuery = graphql(`
  query ConsoleTimeline($id: ID!, $after: String) {
    componentTimeline(componentId: $id, first: 200, after: $after) {
      events { cursor at kind actor fromPhase toPhase fromStatus toStatus action error reason session }
      nextCursor
    }
  }
`);

export const SessionsQuery = graphql(`
  query ConsoleSessions {
    sessions { name tenant operation templateName limit paused aborted createdBy result resultText status { status startTime endTime error } approval { waiting } }
  }
`);

export const ProgressFields = graphql(`
  fragment ConsoleProgress on SessionExtendedStatus {
    name status result managedComponentsCount percentSuccessful percentFailed paused pauseReason
    phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }
    failureReasons { key count ids list }
    retrying { key count ids }
    blocked { service reason since count ids error }
    errorSummary { key count list }
    timing { duration }
  }
`);

export const SessionProgressSubscription = graphql(`
  subscription ConsoleSessionProgress($name: String!) {
    sessionProgress(name: $name) { ...ConsoleProgress }
  }
`);

/** A session's wait for a second admin (docs/approval.md): null when it needs none. */
export const ApprovalFields = graphql(`
  fragment ConsoleApproval on SessionApproval { reason waiting approvedBy approvedAt }
`);

/** Approve a waiting session: the API refuses its creator (FORBIDDEN) and a session that does not wait (CONFLICT). */
export const ApproveMutation = graphql(`
  mutation ConsoleApprove($name: String!) { approveSession(name: $name) { name approval { ...ConsoleApproval } } }
`);

export const SessionStatusQuery = graphql(`
  query ConsoleSessionStatus($name: String!) {
    sessionStatus(name: $name) { ...ConsoleProgress }
    session(name: $name) { templateName operation resultText createdBy approval { ...ConsoleApproval } }
    explainSession(name: $name) { remaining groups { waitingFor description count examples } }
  }
`);

export const TemplatesQuery = graphql(`
  query ConsoleTemplates { sessionTemplates { name tenant description } }
`);

export const PlanQuery = graphql(`
  query ConsolePlan($input: CreateSessionInput!) {
    planSession(input: $input) {
      valid setupError
      errors { field message }
      warnings { field message }
      counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }
      bootSets { name nodeCount kernel configuration }
      nodes { id action skipReason detail }
    }
  }
`);

export const CreateSessionMutation = graphql(`
  mutation ConsoleCreateSession($input: CreateSessionInput!) {
    createSession(input: $input) { session { name } warnings { field message } }
  }
`);

export const PauseMutation = graphql(`
  mutation ConsolePause($name: String!) { pauseSession(name: $name, reason: "paused from the console") { name paused } }
`);

export const ResumeMutation = graphql(`
  mutation ConsoleResume($name: String!) { resumeSession(name: $name) { name paused } }
`);

export const AbortMutation = graphql(`
  mutation ConsoleAbort($name: String!) { abortSession(name: $name) { session { name aborted } stopped } }
`);

/** The node's hardware as its BMC described it (standalone sites; ui/HardwareCard.tsx). */
export const NodeHardwareQuery = graphql(`
  query ConsoleNodeHardware($id: ID!) {
    nodes(xnames: [$id]) {
      xname inspectedAt
      bmc { driver address }
      hardware { manufacturer model serialNumber cpuCount cpuModel memoryGiB macs biosVersion bmcFirmwareVersion disks { name model capacityBytes } }
    }
  }
`);
