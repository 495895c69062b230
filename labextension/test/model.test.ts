import type { RecallApi } from '../src/api';
import { RecallModel } from '../src/model';
import { IWatcher } from '../src/state';
import { job, run, trans } from './records';

function watcher(id: string, checks: number): IWatcher {
  return {
    watcher_id: id,
    tool_name: 'filesystem.read',
    label: 'watched file',
    interval: 5,
    notify_when: 'on_change',
    status: 'active',
    checks,
    notifications: checks,
    last_check_at: null,
    next_check_at: null
  };
}

/** An API whose watcher reads answer when the test says so; the counts answer at once. */
class SlowWatcherApi {
  answers: ((watcher: IWatcher) => void)[] = [];

  watcher(): Promise<IWatcher> {
    return new Promise(resolve => this.answers.push(resolve));
  }

  counts(): Promise<object> {
    return Promise.resolve({ active: 0 });
  }
}

describe('RecallModel', () => {
  it('keeps a notification that arrives while a watcher is fetched again', async () => {
    jest.useFakeTimers();
    const api = new SlowWatcherApi();
    const model = new RecallModel(api as unknown as RecallApi, trans);
    model.apply({ type: 'job.created', job: job('w1', { kind: 'watcher' }) });
    // The check ends: the watcher is stale and fetched again; its notification comes meanwhile.
    model.apply({ type: 'run.finished', run: run('r1', 'w1', { status: 'succeeded' }) });
    const notification = {
      id: 'n1',
      message: 'watched content v1',
      title: 'watched file',
      source: { kind: 'watcher', job_id: 'w1', run_id: 'r1' },
      created_at: '2030-01-01T09:00:01Z'
    };
    model.apply({ type: 'notification', notification });
    for (const answer of api.answers) {
      answer(watcher('w1', 1));
    }
    await Promise.resolve();
    await Promise.resolve();
    expect(model.state.watchers['w1'].checks).toBe(1);
    expect(model.state.notifications.map(known => known.id)).toEqual(['n1']);
    jest.useRealTimers();
  });
});
