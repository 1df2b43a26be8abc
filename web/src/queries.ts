/**
 * Every operation the console sends, typed by graphql-codegen from schema/*.graphql (npm run codegen
 * writes web/src/gql). The console uses only the public API: what it shows, any client could show.
 */
import { graphql } from './gql/index.ts';

export const WhoamiQuery = graphql(`
  query ConsoleWhoami { whoami { subject role tenant via } }
`);

export const ComponentsPage = graphql(`
  query ConsoleComponents($first: Int!, $after: String) {
    components(first: $first, after: $after) {
      nodes { id enabled session failureReason status { phase status } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

/** The map's live feed: the events of a short window as one message (componentEventBatches). */
export const ComponentEventBatchesSubscription = graphql(`
  subscription ConsoleComponentEventBatches($after: ID) {
    componentEventBatches(after: $after) {
      cursor
      events { cursor componentId session kind toPhase toStatus reason error }
    }
  }
`);

export const LatestEventQuery = graphql(`
  query ConsoleLatestEvent($after: ID) {
    componentEvents(after: $after, first: 1000) { cursor }
  }
`);

export const NodeQuery = graphql(`
  query ConsoleNode($id: ID!) {
    component(id: $id) {
      id enabled error failureReason session sessionTenant retryPolicy updatedAt
      status { phase status statusOverride }
      actualState { bootArtifacts { kernel kernelParameters initrd } lastUpdated }
      desiredState { bootArtifacts { kernel kernelParameters initrd } configuration lastUpdated }
      lastAction { action failed lastUpdated }
      eventStats { powerOnAttempts powerOffGracefulAttempts powerOffForcefulAttempts }
      powerDrift { expected actual since }
    }
    explain(componentId: $id) {
      summary waitingFor nextOperator powerState cfsDesiredConfig cfsStatus sessionPaused sessionPauseReason
      decision { rule phase why }
      criteria { operator criterion met detail }
      blockers { kind detail }
    }
  }
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
    sessions { name tenant operation templateName limit paused aborted createdBy status { status startTime endTime error } }
  }
`);

export const ProgressFields = graphql(`
  fragment ConsoleProgress on SessionExtendedStatus {
    name status managedComponentsCount percentSuccessful percentFailed paused pauseReason
    phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }
    failureReasons { key count ids list }
    errorSummary { key count list }
    timing { duration }
  }
`);

export const SessionProgressSubscription = graphql(`
  subscription ConsoleSessionProgress($name: String!) {
    sessionProgress(name: $name) { ...ConsoleProgress }
  }
`);

export const SessionStatusQuery = graphql(`
  query ConsoleSessionStatus($name: String!) {
    sessionStatus(name: $name) { ...ConsoleProgress }
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
