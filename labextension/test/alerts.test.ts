import { toastFor } from '../src/alerts';
import { emptyState, IChangeEvent, INotification, withJobs } from '../src/state';
import { job, run, trans } from './records';

function finished(jobId: string, status: string, error: string | null = null): IChangeEvent {
  const ended = { status, finished_at: '2030-01-01T09:00:01Z', error };
  return { type: 'run.finished', run: run(`run-of-${jobId}`, jobId, ended) };
}

function notified(extra: Partial<INotification>): IChangeEvent {
  const notification = {
    id: 'n',
    message: 'first line\nsecond line',
    created_at: '2030-01-01T09:00:00Z',
    ...extra
  };
  return { type: 'notification', notification };
}

describe('toastFor', () => {
  const state = withJobs(emptyState(), [job('j'), job('w', { kind: 'watcher' })]);

  it('says a failed run with its error and links to it', () => {
    expect(toastFor(finished('j', 'failed', 'ValueError: boom'), state, trans)).toEqual({
      type: 'error',
      category: 'failedRuns',
      message: 'Recall job "job j" failed: ValueError: boom',
      jobId: 'j',
      runId: 'run-of-j'
    });
    expect(toastFor(finished('j', 'succeeded'), state, trans)).toBeNull();
    expect(toastFor({ ...finished('j', 'failed'), type: 'run.started' }, state, trans)).toBeNull();
  });

  it('says a run stopped at its time limit as a failure', () => {
    const error = 'timed_out: still running after its limit of 30 s';
    expect(toastFor(finished('j', 'timed_out', error), state, trans)).toEqual({
      type: 'error',
      category: 'failedRuns',
      message: `Recall job "job j" failed: ${error}`,
      jobId: 'j',
      runId: 'run-of-j'
    });
  });

  it("leaves a watcher's failed check to its notification", () => {
    expect(toastFor(finished('w', 'failed', 'check failed: 503'), state, trans)).toBeNull();
  });

  it('warns of a watcher alert, linking to the check', () => {
    const alert = notified({
      title: 'Watcher API health: error',
      priority: 'high',
      tags: ['watcher', 'error'],
      delivered_to: 'session',
      source: { kind: 'watcher', job_id: 'w', run_id: 'r7' }
    });
    expect(toastFor(alert, state, trans)).toEqual({
      type: 'warning',
      category: 'watcherAlerts',
      message: 'Watcher API health: error',
      jobId: 'w',
      runId: 'r7'
    });
    const calm = notified({ source: { kind: 'watcher', job_id: 'w', run_id: 'r8' } });
    expect(toastFor(calm, state, trans)?.type).toBe('info');
    expect(toastFor(calm, state, trans)?.message).toBe('first line');
  });

  it('says how a background task ended', () => {
    const task = (status: string) =>
      notified({
        title: `Background task shell.run ${status}`,
        tags: ['background', status],
        structured_data: { task_id: 'bg-1', status },
        session: 'work.ipynb',
        delivered_to: 'ui'
      });
    expect(toastFor(task('succeeded'), state, trans)).toEqual({
      type: 'success',
      category: 'backgroundTasks',
      message: 'Background task shell.run succeeded (work.ipynb)'
    });
    expect(toastFor(task('failed'), state, trans)?.type).toBe('error');
    expect(toastFor(task('cancelled'), state, trans)?.type).toBe('info');
  });

  it("shows notifications for the user's UI, not those for a notebook's kernel", () => {
    const deploy = toastFor(notified({ delivered_to: 'ui', title: 'Deploy done' }), state, trans);
    expect(deploy?.message).toBe('Deploy done');
    expect(deploy?.category).toBe('uiNotifications');
    expect(toastFor(notified({ delivered_to: 'session' }), state, trans)).toBeNull();
    const outcome = notified({
      delivered_to: 'ui',
      source: { kind: 'job', job_id: 'j', run_id: 'r' },
      structured_data: { status: 'failed' }
    });
    // The failed run has its own toast already.
    expect(toastFor(outcome, state, trans)).toBeNull();
  });
});
