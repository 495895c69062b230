import {
  FINISHED,
  finishedCount,
  finishedQuery,
  listingQuery,
  PAGE_SIZE,
  statusCounts
} from '../src/pages';
import { emptyFilter } from '../src/state';

describe('listingQuery', () => {
  it('asks for the first page, soonest fire first', () => {
    expect(listingQuery(emptyFilter())).toEqual({
      sort: 'next_fire_at',
      limit: String(PAGE_SIZE)
    });
  });

  it('sends the status, kind and search text to the server, with the cursor', () => {
    const filter = {
      ...emptyFilter(),
      status: 'failed',
      kind: 'recall',
      query: '  report ',
      notebook: 'a.ipynb'
    };
    expect(listingQuery(filter, 'abc')).toEqual({
      sort: 'next_fire_at',
      limit: String(PAGE_SIZE),
      status: 'failed',
      kind: 'recall',
      q: 'report',
      cursor: 'abc'
    });
  });
});

describe('finishedCount', () => {
  it('adds the jobs that never fire again', () => {
    const counts = { total: 9, by_status: { active: 2, completed: 3, cancelled: 4 }, running: 0 };
    expect(finishedCount(counts)).toBe(7);
    expect(finishedCount({ total: 0, by_status: {}, running: 0 })).toBe(0);
  });
});

describe('statusCounts', () => {
  it('counts pending as the active jobs without a run going', () => {
    const counts = { total: 9, by_status: { active: 5, paused: 4 }, running: 2 };
    expect(statusCounts(counts)).toEqual({ running: 2, pending: 3 });
    expect(statusCounts({ total: 1, by_status: { completed: 1 }, running: 1 })).toEqual({
      running: 1,
      pending: 0
    });
  });
});

describe('finishedQuery', () => {
  it('selects every finished job with no filter', () => {
    expect(finishedQuery(emptyFilter())).toEqual({ status: FINISHED });
  });

  it('follows the search, the kind and a finished status chosen', () => {
    const filter = { ...emptyFilter(), query: ' report ', kind: 'recall', notebook: 'a.ipynb' };
    expect(finishedQuery(filter)).toEqual({ status: FINISHED, kind: 'recall', q: 'report' });
    expect(finishedQuery({ ...filter, status: 'failed' })).toEqual({
      status: 'failed',
      kind: 'recall',
      q: 'report'
    });
  });

  it('selects none when the status chosen is not a finished one', () => {
    expect(finishedQuery({ ...emptyFilter(), status: 'active' })).toBeNull();
  });
});
