/**
 * Which attempt of its occurrence a run is, as the run history shows it ('attempt 2/3').
 */
import { attemptOf } from '../src/state';
import { job, run } from './records';

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
