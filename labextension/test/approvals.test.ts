import {
  applyApproval,
  approvalOf,
  IApproval,
  pendingApprovals,
  withArrivals
} from '../src/approvalRecords';

function approval(id: string, created: string, status: IApproval['status'] = 'pending'): IApproval {
  return {
    id,
    owner: 'alice',
    tool: 'shell.run',
    summary: `shell.run(command='${id}')`,
    source: 'kernel policy',
    asked_by: 'kernel:a.ipynb',
    created_at: created,
    expires_at: '2030-01-01T12:05:00+00:00',
    status,
    decided_by: status === 'pending' ? null : 'alice',
    decided_at: status === 'pending' ? null : '2030-01-01T12:01:00+00:00',
    note: null
  };
}

describe('applyApproval', () => {
  it('adds a new record, newest first', () => {
    const older = approval('a', '2030-01-01T12:00:00+00:00');
    const newer = approval('b', '2030-01-01T12:00:05+00:00');
    expect(applyApproval([older], newer).map(r => r.id)).toEqual(['b', 'a']);
    expect(applyApproval([newer], older).map(r => r.id)).toEqual(['b', 'a']);
  });

  it('replaces a record by id (a decision made elsewhere)', () => {
    const waiting = approval('a', '2030-01-01T12:00:00+00:00');
    const decided = approval('a', '2030-01-01T12:00:00+00:00', 'denied');
    const records = applyApproval([waiting], decided);
    expect(records).toEqual([decided]);
    expect(pendingApprovals(records)).toEqual([]);
  });

  it('never undoes a decision with a pending copy that arrives late', () => {
    const waiting = approval('a', '2030-01-01T12:00:00+00:00');
    const approved = approval('a', '2030-01-01T12:00:00+00:00', 'approved');
    expect(applyApproval([approved], waiting)).toEqual([approved]);
  });
});

describe('withArrivals', () => {
  it('keeps the events that arrived while an older listing was on its way', () => {
    // The listing was read before the approval was asked: it lacks it.
    const asked = approval('a', '2030-01-01T12:00:00+00:00');
    const records = withArrivals([], [asked]);
    expect(pendingApprovals(records)).toEqual([asked]);
  });

  it('keeps a decision the listing already has over the event that asked', () => {
    const asked = approval('a', '2030-01-01T12:00:00+00:00');
    const denied = approval('a', '2030-01-01T12:00:00+00:00', 'denied');
    const other = approval('b', '2030-01-01T12:00:03+00:00');
    const records = withArrivals([denied], [asked, other]);
    expect(records.map(r => [r.id, r.status])).toEqual([
      ['b', 'pending'],
      ['a', 'denied']
    ]);
  });
});

describe('pendingApprovals', () => {
  it('keeps the records waiting for a decision', () => {
    const records = [
      approval('a', '2030-01-01T12:00:00+00:00'),
      approval('b', '2030-01-01T12:00:01+00:00', 'approved'),
      approval('c', '2030-01-01T12:00:02+00:00', 'expired')
    ];
    expect(pendingApprovals(records).map(r => r.id)).toEqual(['a']);
  });
});

describe('approvalOf', () => {
  it('reads the record of approval events only', () => {
    const record = approval('a', '2030-01-01T12:00:00+00:00');
    expect(approvalOf({ type: 'approval.created', approval: record })).toBe(record);
    expect(approvalOf({ type: 'approval.decided', approval: record })).toBe(record);
    expect(approvalOf({ type: 'job.created', approval: record })).toBeNull();
    expect(approvalOf({ type: 'approval.created', approval: null })).toBeNull();
    expect(approvalOf({ type: 'approval.created', approval: { id: 3 } })).toBeNull();
  });
});
