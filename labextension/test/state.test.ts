import {
  appendOutput,
  applyChange,
  emptyState,
  formatDuration,
  formatRelative,
  IJob,
  IRun,
  isFailedRun,
  outputGap,
  pendingRecall,
  visibleJobs,
  withFetchedRun,
  withFetchedRuns,
  withJobs,
  withRuns
} from '../src/state';

function job(id: string, extra: Partial<IJob> = {}): IJob {
  return {
    id,
    name: `job ${id}`,
    kind: 'job',
    status: 'active',
    description: 'every day at 09:00',
    when: 'every day at 09:00',
    tz: 'UTC',
    pending: true,
    target: { type: 'server' },
    next_fire_at: '2030-01-01T09:00:00Z',
    ...extra
  };
}

function run(id: string, jobId: string, extra: Partial<IRun> = {}): IRun {
  return {
    id,
    job_id: jobId,
    status: 'running',
    trigger: 'schedule',
    scheduled_for: '2030-01-01T09:00:00Z',
    started_at: '2030-01-01T09:00:00Z',
    finished_at: null,
    error: null,
    ...extra
  };
}

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

  it('sorts by next fire and filters by status and text', () => {
    expect(visibleJobs(state, { status: '', query: '' }).map(j => j.id)).toEqual([
      'soon',
      'late',
      'off'
    ]);
    expect(visibleJobs(state, { status: 'paused', query: '' }).map(j => j.id)).toEqual(['off']);
    expect(visibleJobs(state, { status: '', query: 'BACKUP' }).map(j => j.id)).toEqual(['late']);
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
  const now = new Date('2030-01-01T09:00:00Z');

  it('says instants relative to now', () => {
    expect(formatRelative('2030-01-01T09:05:00Z', now)).toBe('in 5 min');
    expect(formatRelative('2030-01-01T07:00:00Z', now)).toBe('2 h ago');
    expect(formatRelative('2030-01-01T09:00:30Z', now)).toBe('in 30 s');
    expect(formatRelative(null, now)).toBe('');
  });

  it('says durations in the fitting unit', () => {
    expect(formatDuration(0.25)).toBe('250 ms');
    expect(formatDuration(3.21)).toBe('3.2 s');
    expect(formatDuration(125)).toBe('2 min 5 s');
    expect(formatDuration(3720)).toBe('1 h 2 min');
    expect(formatDuration(null)).toBe('');
  });
});

describe('isFailedRun', () => {
  it('is true only for a finished failed run', () => {
    expect(isFailedRun({ type: 'run.finished', run: run('r', 'a', { status: 'failed' }) })).toBe(
      true
    );
    expect(isFailedRun({ type: 'run.finished', run: run('r', 'a', { status: 'succeeded' }) })).toBe(
      false
    );
    expect(isFailedRun({ type: 'run.started', run: run('r', 'a', { status: 'failed' }) })).toBe(
      false
    );
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
