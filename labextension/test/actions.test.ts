import { actionLabel, allowedActions, allows, buttonActions } from '../src/actions';
import { job, trans } from './records';

describe('allowedActions', () => {
  it("takes the server's allowed_actions, in button order, ignoring unknown names", () => {
    const sent = job('a', { status: 'completed', allowed_actions: ['cancel', 'run_now', 'fly'] });
    expect(allowedActions(sent)).toEqual(['run_now', 'cancel']);
    expect(allowedActions(job('b', { allowed_actions: [] }))).toEqual([]);
  });

  it('falls back to one rule when the server does not send them', () => {
    expect(allowedActions(job('a'))).toEqual(['run_now', 'skip', 'pause', 'cancel', 'edit']);
    expect(allowedActions(job('b', { schedule_kind: 'once' }))).toEqual([
      'run_now',
      'pause',
      'cancel',
      'edit'
    ]);
    expect(allowedActions(job('c', { status: 'paused' }))).toEqual([
      'run_now',
      'resume',
      'cancel',
      'edit'
    ]);
    for (const status of ['completed', 'failed', 'cancelled']) {
      expect(allowedActions(job('d', { status }))).toEqual([]);
    }
  });

  it('answers one action and leaves edit out of the row buttons', () => {
    const finished = job('a', { status: 'completed', allowed_actions: ['run_now', 'edit'] });
    expect(allows(finished, 'run_now')).toBe(true);
    expect(allows(finished, 'pause')).toBe(false);
    expect(buttonActions(finished)).toEqual(['run_now']);
  });

  it('labels each action', () => {
    expect(actionLabel('run_now', trans)).toBe('Run now');
    expect(actionLabel('edit', trans)).toBe('Edit schedule');
  });
});
