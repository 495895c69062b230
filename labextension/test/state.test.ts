import {
  appendOutput,
  applyChange,
  describeCheck,
  emptyFilter,
  emptyState,
  formatDuration,
  hasNotebookFilters,
  inNotebookFilters,
  INotification,
  IWatcher,
  jobNotebooks,
  MAX_NOTIFICATIONS,
  notebooksWithPendingRecalls,
  outputGap,
  pendingRecall,
  visibleJobs,
  withFetchedRun,
  withFetchedRuns,
  staleWatcher,
  withJobs,
  withListing,
  withRuns,
  withWatcher,
  withWatchers
} from '../src/state';
import { job, run, trans } from './records';

describe('withListing', () => {
  it('keeps the events that arrived while the listing was on its way', () => {
    // The listing was read before 'new' was created and before 'gone' was deleted.
    const state = withJobs(emptyState(), [job('gone')]);
    const arrived = [
      { type: 'job.created', job: job('new') },
      { type: 'job.deleted', job: job('gone') }
    ];
    const listed = withListing(state, [job('kept'), job('gone')], arrived);
    expect(Object.keys(listed.jobs).sort()).toEqual(['kept', 'new']);
  });

  it('is the listing itself when nothing arrived', () => {
    const listed = withListing(withJobs(emptyState(), [job('old')]), [job('a')], []);
    expect(Object.keys(listed.jobs)).toEqual(['a']);
  });
});

describe('applyChange', () => {
  it('adds, updates and deletes jobs', () => {
    let state = applyChange(emptyState(), { type: 'job.created', job: job('a') });
    expect(Object.keys(state.jobs)).toEqual(['a']);
    state = applyChange(state, { type: 'job.updated', job: job('a', { status: 'paused' }) });
    expect(state.jobs.a.status).toBe('paused');
    state = applyChange(state, { type: 'job.deleted', job: job('a') });
    expect(state.jobs).toEqual({});
  });

  it('keeps loaded run histories current and ignores unloaded ones', () => {
    let state = withRuns(withJobs(emptyState(), [job('a'), job('b')]), 'a', []);
    state = applyChange(state, { type: 'run.started', run: run('r1', 'a') });
    state = applyChange(state, {
      type: 'run.output',
      run: run('r1', 'a'),
      text: 'hello ',
      offset: 0
    });
    state = applyChange(state, {
      type: 'run.output',
      run: run('r1', 'a'),
      text: 'world',
      offset: 6
    });
    state = applyChange(state, {
      type: 'run.finished',
      run: run('r1', 'a', { status: 'succeeded', duration: 0.5 })
    });
    expect(state.runs.a).toHaveLength(1);
    expect(state.runs.a[0].status).toBe('succeeded');
    expect(state.runs.a[0].output).toBe('hello world');
    const same = applyChange(state, { type: 'run.started', run: run('r2', 'b') });
    expect(same).toBe(state);
  });

  it('puts new runs first', () => {
    let state = withRuns(withJobs(emptyState(), [job('a')]), 'a', [
      run('old', 'a', { status: 'failed' })
    ]);
    state = applyChange(state, { type: 'run.started', run: run('new', 'a') });
    expect(state.runs.a.map(r => r.id)).toEqual(['new', 'old']);
  });

  it('a re-sync drops jobs that are gone with their histories', () => {
    const state = withRuns(withJobs(emptyState(), [job('a'), job('b')]), 'b', []);
    const synced = withJobs(state, [job('a')]);
    expect(Object.keys(synced.jobs)).toEqual(['a']);
    expect(synced.runs).toEqual({});
  });
});

describe('appendOutput', () => {
  it('adds only what lies past the known output', () => {
    expect(appendOutput('hello', 'llo world', 2)).toBe('hello world');
    expect(appendOutput('hello world', 'world', 6)).toBe('hello world');
    expect(appendOutput('', 'abc', null)).toBe('abc');
  });

  it('keeps the known output when a chunk leaves a gap', () => {
    expect(appendOutput('ab', 'xyz', 5)).toBe('ab');
  });
});

describe('visibleJobs', () => {
  const state = withJobs(emptyState(), [
    job('late', { name: 'nightly backup', next_fire_at: '2030-01-02T00:00:00Z' }),
    job('soon', { name: 'morning check', next_fire_at: '2030-01-01T09:00:00Z' }),
    job('off', { name: 'old report', status: 'paused', next_fire_at: null })
  ]);

  const ids = (filter: Partial<ReturnType<typeof emptyFilter>>, from = state) =>
    visibleJobs(from, { ...emptyFilter(), ...filter }).map(j => j.id);

  it('sorts by next fire and filters by status and text', () => {
    expect(ids({})).toEqual(['soon', 'late', 'off']);
    expect(ids({ status: 'paused' })).toEqual(['off']);
    expect(ids({ query: 'BACKUP' })).toEqual(['late']);
  });

  const notebooks = withJobs(emptyState(), [
    job('plain', { target: { type: 'headless', kernel_name: 'python3' } }),
    job('a-job', { target: { type: 'kernel', path: 'a.ipynb' } }),
    job('a-recall', {
      kind: 'recall',
      session: 'a.ipynb',
      target: { type: 'kernel', path: 'a.ipynb' }
    }),
    job('b-job', { target: { type: 'kernel', path: 'dir/b.ipynb' } }),
    job('b-done', {
      kind: 'recall',
      session: 'dir/b.ipynb',
      pending: false,
      status: 'completed',
      target: { type: 'kernel', path: 'dir/b.ipynb' }
    }),
    job('w', { kind: 'watcher', session: 'dir/b.ipynb', target: { type: 'server' } })
  ]);

  it('filters by kind and by notebook', () => {
    expect(ids({ kind: 'recall' }, notebooks).sort()).toEqual(['a-recall', 'b-done']);
    expect(ids({ kind: 'watcher' }, notebooks)).toEqual(['w']);
    expect(ids({ notebook: 'dir/b.ipynb' }, notebooks).sort()).toEqual(['b-done', 'b-job', 'w']);
    expect(jobNotebooks(notebooks)).toEqual(['a.ipynb', 'dir/b.ipynb']);
  });

  it('keeps only the notebooks with a pending recall when asked', () => {
    expect([...notebooksWithPendingRecalls(notebooks)]).toEqual(['a.ipynb']);
    expect(ids({ pendingOnly: true }, notebooks).sort()).toEqual(['a-job', 'a-recall']);
    const cancelled = applyChange(notebooks, {
      type: 'job.updated',
      job: { ...notebooks.jobs['a-recall'], pending: false, status: 'cancelled' }
    });
    expect(ids({ pendingOnly: true }, cancelled)).toEqual([]);
  });
});

function notification(id: string, extra: Partial<INotification> = {}): INotification {
  return { id, message: `message ${id}`, created_at: '2030-01-01T09:00:00Z', ...extra };
}

describe('notifications', () => {
  it('come first, once each, and the oldest drop off', () => {
    let state = emptyState();
    state = applyChange(state, { type: 'notification', notification: notification('n1') });
    state = applyChange(state, { type: 'notification', notification: notification('n2') });
    const again = applyChange(state, { type: 'notification', notification: notification('n1') });
    expect(again).toBe(state);
    expect(state.notifications.map(n => n.id)).toEqual(['n2', 'n1']);
    for (let i = 0; i < MAX_NOTIFICATIONS + 5; i++) {
      state = applyChange(state, { type: 'notification', notification: notification(`x${i}`) });
    }
    expect(state.notifications).toHaveLength(MAX_NOTIFICATIONS);
    expect(state.notifications[0].id).toBe(`x${MAX_NOTIFICATIONS + 4}`);
  });

  it('survive a re-sync of the jobs', () => {
    const state = applyChange(emptyState(), {
      type: 'notification',
      notification: notification('n')
    });
    expect(withJobs(state, [job('a')]).notifications).toHaveLength(1);
  });
});

function watcher(id: string, extra: Partial<IWatcher> = {}): IWatcher {
  return {
    watcher_id: id,
    tool_name: 'http.get',
    label: `watcher ${id}`,
    interval: 30,
    notify_when: 'on_change',
    status: 'running',
    checks: 3,
    notifications: 1,
    last_check_at: '2030-01-01T09:00:00Z',
    next_check_at: '2030-01-01T09:00:30Z',
    ...extra
  };
}

describe('watchers', () => {
  const check = {
    check: 3,
    checked_at: '2030-01-01T09:00:00Z',
    success: true,
    result: { success: true, data: { status_code: 200 } },
    notified: false
  };

  it('keep their last result across a listing, which has none', () => {
    let state = withWatcher(emptyState(), watcher('w', { last_result: check }));
    state = withWatchers(state, [watcher('w', { checks: 4 }), watcher('v')]);
    expect(state.watchers.w.checks).toBe(4);
    expect(state.watchers.w.last_result).toEqual(check);
    expect(state.watchers.v.last_result).toBeUndefined();
  });

  it('are gone with their job', () => {
    const state = withWatcher(
      withJobs(emptyState(), [job('w', { kind: 'watcher' })]),
      watcher('w')
    );
    const after = applyChange(state, { type: 'job.deleted', job: state.jobs.w });
    expect(after.watchers).toEqual({});
  });

  it('are fetched again when a check ends or their job changes', () => {
    const state = withJobs(emptyState(), [job('w', { kind: 'watcher' }), job('j')]);
    expect(staleWatcher(state, { type: 'run.finished', run: run('r', 'w') })).toBe('w');
    expect(staleWatcher(state, { type: 'run.finished', run: run('r', 'j') })).toBeNull();
    expect(staleWatcher(state, { type: 'run.started', run: run('r', 'w') })).toBeNull();
    const created = job('new', { kind: 'watcher' });
    expect(staleWatcher(state, { type: 'job.created', job: created })).toBe('new');
    expect(staleWatcher(state, { type: 'job.updated', job: job('j') })).toBeNull();
  });

  it('say their last result in one clipped line', () => {
    expect(describeCheck(check, trans)).toBe('ok: {"status_code":200}');
    const failed = {
      ...check,
      success: false,
      result: { success: false, error: 'http.get: HTTP 503\nService Unavailable' }
    };
    expect(describeCheck(failed, trans)).toBe('failed: http.get: HTTP 503 Service Unavailable');
    expect(describeCheck({ ...check, result: { data: 'x'.repeat(500) } }, trans, 20)).toBe(
      `ok: ${'x'.repeat(15)}…`
    );
    expect(describeCheck(null, trans)).toBe('no check yet');
  });
});

describe('pendingRecall', () => {
  it('finds the pending recall of a notebook by its session', () => {
    const state = withJobs(emptyState(), [
      job('j', { session: 'a.ipynb' }),
      job('done', { kind: 'recall', session: 'a.ipynb', pending: false, status: 'cancelled' }),
      job('r', { kind: 'recall', session: 'a.ipynb' })
    ]);
    expect(pendingRecall(state, 'a.ipynb')?.id).toBe('r');
    expect(pendingRecall(state, 'b.ipynb')).toBeUndefined();
  });
});

describe('formatting', () => {
  it('says durations in the fitting unit', () => {
    expect(formatDuration(0.25)).toBe('250 ms');
    expect(formatDuration(3.21)).toBe('3.2 s');
    expect(formatDuration(125)).toBe('2 min 5 s');
    expect(formatDuration(3720)).toBe('1 h 2 min');
    expect(formatDuration(null)).toBe('');
  });
});

describe('live output of a running run', () => {
  const chunk = (text: string, offset: number) => ({
    type: 'run.output',
    run: run('r1', 'a'),
    text,
    offset
  });

  it('joins chunks to the fetched output by offset, without gaps or repeats', () => {
    // The history was listed when the run had printed "one\n".
    let state = withRuns(withJobs(emptyState(), [job('a')]), 'a', [
      run('r1', 'a', { output: 'one\n' })
    ]);
    state = applyChange(state, chunk('one\n', 0));
    state = applyChange(state, chunk('two\n', 4));
    expect(state.runs.a[0].output).toBe('one\ntwo\n');
    expect(outputGap(state, chunk('two\n', 4))).toBe(false);

    const gap = chunk('four\n', 13);
    state = applyChange(state, gap);
    expect(state.runs.a[0].output).toBe('one\ntwo\n');
    expect(outputGap(state, gap)).toBe(true);

    // The fetch answered with what the store held then; chunks already joined are kept.
    state = withFetchedRun(state, run('r1', 'a', { output: 'one\ntwo\nthree\n' }));
    state = applyChange(state, chunk('three\nfour\n', 8));
    expect(state.runs.a[0].output).toBe('one\ntwo\nthree\nfour\n');
    state = withFetchedRun(state, run('r1', 'a', { output: 'one\ntwo\n' }));
    expect(state.runs.a[0].output).toBe('one\ntwo\nthree\nfour\n');
  });

  it('leaves the output of a run never loaded unknown until a chunk at 0', () => {
    let state = withRuns(withJobs(emptyState(), [job('a')]), 'a', []);
    state = applyChange(state, chunk('two\n', 4));
    expect(state.runs.a[0].output).toBeUndefined();
    expect(outputGap(state, chunk('two\n', 4))).toBe(true);
    state = withRuns(withJobs(emptyState(), [job('a')]), 'a', []);
    state = applyChange(state, chunk('one\n', 0));
    expect(state.runs.a[0].output).toBe('one\n');
  });

  it('a late fetch does not undo the finish the events brought', () => {
    let state = withRuns(withJobs(emptyState(), [job('a')]), 'a', [run('r1', 'a', { output: '' })]);
    state = applyChange(state, {
      type: 'run.finished',
      run: run('r1', 'a', { status: 'succeeded', finished_at: '2030-01-01T09:00:03Z', duration: 3 })
    });
    state = withFetchedRun(state, run('r1', 'a', { output: 'one\n' }));
    expect(state.runs.a[0]).toMatchObject({ status: 'succeeded', duration: 3, output: 'one\n' });
  });

  it('a fetched history keeps the runs that started while it was under way', () => {
    let state = withRuns(withJobs(emptyState(), [job('a')]), 'a', []);
    state = applyChange(state, { type: 'run.started', run: run('new', 'a') });
    state = withFetchedRuns(state, 'a', [
      run('old', 'a', { status: 'failed', finished_at: '2030-01-01T09:00:01Z' })
    ]);
    expect(state.runs.a.map(r => r.id)).toEqual(['new', 'old']);
  });
});

describe('inNotebookFilters', () => {
  const nb = (path: string) => ({ type: 'kernel', path });
  const jobs = [
    job('a', { status: 'cancelled', target: nb('a.ipynb') }),
    job('b', { status: 'failed', target: nb('b.ipynb') }),
    job('c', { status: 'completed' })
  ];
  const recall = job('r', {
    kind: 'recall',
    pending: true,
    session: 'b.ipynb',
    target: nb('b.ipynb')
  });
  const state = withJobs(emptyState(), [recall]);

  it('keeps every job with no notebook filter', () => {
    expect(inNotebookFilters(state, emptyFilter(), jobs)).toEqual(jobs);
  });

  it('keeps the jobs of the notebook chosen, whatever the other filters', () => {
    const filter = { ...emptyFilter(), notebook: 'a.ipynb', query: 'zzz', status: 'active' };
    expect(inNotebookFilters(state, filter, jobs).map(j => j.id)).toEqual(['a']);
  });

  it('keeps the jobs of notebooks with a pending recall', () => {
    const filter = { ...emptyFilter(), pendingOnly: true };
    expect(inNotebookFilters(state, filter, jobs).map(j => j.id)).toEqual(['b']);
    expect(hasNotebookFilters(filter)).toBe(true);
    expect(hasNotebookFilters(emptyFilter())).toBe(false);
  });
});
