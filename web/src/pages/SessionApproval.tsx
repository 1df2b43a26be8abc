/**
 * A session's wait for a second admin's approval (docs/approval.md): a badge with words and a shape,
 * the reason, and for admins an Approve button; once approved, who approved it and when. The API
 * decides who may approve (not the session's creator): its refusal is shown as it words it.
 */
import { useMutation } from 'urql';
import type { CombinedError } from 'urql';
import { canApprove, useIdentity } from '../auth.tsx';
import { ApproveMutation } from '../queries.ts';
import type { ConsoleApprovalFragment } from '../gql/graphql.ts';

/** The API's own words (urql prefixes "[GraphQL] " to the combined message). */
const apiMessage = (e: CombinedError): string => e.graphQLErrors[0]?.message ?? e.message;

/** The badge of a waiting session, for the session page and the sessions list. */
export const AwaitingApprovalBadge = () => (
  <span className="state awaiting" data-testid="approval-badge">
    <span aria-hidden="true">⚑ </span>waiting for a second admin's approval
  </span>
);

export function SessionApproval({
  name,
  createdBy,
  approval,
  onDone,
}: {
  name: string;
  createdBy: string | null | undefined;
  approval: ConsoleApprovalFragment;
  onDone(): void;
}) {
  const who = useIdentity();
  const [approved, approve] = useMutation(ApproveMutation);
  if (!approval.waiting)
    return (
      <p className="muted" data-testid="approval" data-waiting="false">
        Approved by <b>{approval.approvedBy}</b>
        {approval.approvedAt && ` at ${new Date(approval.approvedAt).toLocaleString()}`} ({approval.reason}).
      </p>
    );
  return (
    <section className="approval" data-testid="approval" data-waiting="true" aria-labelledby="approval-title">
      <h2 id="approval-title">
        <AwaitingApprovalBadge />
      </h2>
      <p>
        <b>Why:</b> {approval.reason}. Nothing acts on its nodes until then; its creator ({createdBy || 'unknown'}) may not approve it.
      </p>
      {canApprove(who) && (
        <p>
          <button type="button" disabled={approved.fetching} onClick={() => void approve({ name }).then(() => onDone())}>
            Approve
          </button>
        </p>
      )}
      {approved.error && (
        <p className="error" role="alert" data-testid="approval-error">
          {apiMessage(approved.error)}
        </p>
      )}
    </section>
  );
}
