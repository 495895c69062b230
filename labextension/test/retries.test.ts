/**
 * Which attempt of its occurrence a run is, as the run history shows it ('attempt 2/3').
 */
import { toastFor } from '../src/alerts';
import { attemptOf, emptyState, withJobs } from '../src/state';
import { job, run, trans } from './records';

describe('attemptOf', () => {
  const retried = job('j1', { policies: { retries: { max: 2, backoff: 5 } } });
  const plain = job('j2', { policies: { retries: null } });

  it('counts the attempts of a job that retries', () => {
    expect(attemptOf(run('r1', 'j1', { attempt: 1 }), retried)).toEqual([1, 3]);
    expect(attemptOf(run('r3', 'j1', { attempt: 3 }), retried)).toEqual([3, 3]);
  });

  it('says nothing of a first run of a job that does not retry', () => {
    expect(attemptOf(run('r1', 'j2', { attempt: 1 }), plain)).toBeNull();
    expect(attemptOf(run('r1', 'j2'), plain)).toBeNull();
    expect(attemptOf(run('r1', 'j2'))).toBeNull();
  });

  it('names a retry even when the job is not known (or no longer retries)', () => {
    expect(attemptOf(run('r2', 'j2', { attempt: 2 }), plain)).toEqual([2, null]);
    expect(attemptOf(run('r2', 'j9', { attempt: 2 }))).toEqual([2, null]);
  });
});

describe('the toast of a failed attempt followed by a retry', () => {
  const state = withJobs(emptyState(), [job('j')]);

  it('is a warning that a retry follows, not the failure', () => {
    const failed = run('r1', 'j', {
      status: 'failed',
      finished_at: '2030-01-01T09:00:01Z',
      error: 'ValueError: boom',
      attempt: 1,
      retry_at: '2030-01-01T09:00:11Z'
    });
    expect(toastFor({ type: 'run.finished', run: failed }, state, trans)).toEqual({
      type: 'warning',
      category: 'failedRuns',
      message: 'Recall job "job j" failed (attempt 1), retrying: ValueError: boom',
      jobId: 'j',
      runId: 'r1'
    });
    const last = { ...failed, attempt: 3, retry_at: null };
    expect(toastFor({ type: 'run.finished', run: last }, state, trans)?.type).toBe('error');
  });
});
