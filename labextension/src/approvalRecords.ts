/** Approval records of the inbox (docs/rest.md#approvals) and the pure rules the views share. */

/** A tool call waiting for (or settled by) a decision: GET /api/recall/approvals/{id}. */
export interface IApproval {
  id: string;
  owner: string;
  tool: string;
  summary: string;
  source: string;
  asked_by: string;
  created_at: string;
  expires_at: string;
  status: 'pending' | 'approved' | 'denied' | 'expired';
  decided_by: string | null;
  decided_at: string | null;
  note: string | null;
}

export type Decision = 'approve' | 'deny';

export const APPROVAL_EVENTS: ReadonlySet<string> = new Set([
  'approval.created',
  'approval.decided',
  'approval.expired'
]);

/**
 * The records after an event's record: replaced by id, else added; newest first. A decision is
 * final: a pending copy that arrives late (an older listing, a delayed event) never undoes it.
 */
export function applyApproval(records: IApproval[], record: IApproval): IApproval[] {
  const known = records.find(item => item.id === record.id);
  if (known && known.status !== 'pending' && record.status === 'pending') {
    return records;
  }
  const others = records.filter(item => item.id !== record.id);
  return [record, ...others].sort((a, b) => b.created_at.localeCompare(a.created_at));
}

/**
 * A listing's records with the events' records that arrived while it was on its way: the
 * listing was read before them, so replacing the records with it alone would lose them.
 */
export function withArrivals(listing: IApproval[], arrived: IApproval[]): IApproval[] {
  return arrived.reduce(applyApproval, listing);
}

/** The records still waiting for a decision. */
export function pendingApprovals(records: IApproval[]): IApproval[] {
  return records.filter(record => record.status === 'pending');
}

/** The approval an event of the change stream carries, if it is an approval event. */
export function approvalOf(event: { type?: unknown; approval?: unknown }): IApproval | null {
  if (typeof event.type !== 'string' || !APPROVAL_EVENTS.has(event.type)) {
    return null;
  }
  const approval = event.approval as IApproval | null | undefined;
  return approval && typeof approval.id === 'string' ? approval : null;
}
