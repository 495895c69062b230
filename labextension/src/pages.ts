import type { IFilter, IJob } from './state';

/** Jobs read per page: the first page when the sidebar opens, and each "Load more". */
export const PAGE_SIZE = 100;

/** One page of `GET /api/recall/jobs` (docs/rest.md, Listing pages). */
export interface IJobPage {
  jobs: IJob[];
  next_cursor: string | null;
}

/** `GET /api/recall/jobs/counts`: how many jobs by status, and how many have a run going. */
export interface IJobCounts {
  total: number;
  by_status: { [status: string]: number };
  running: number;
}

/** The statuses of jobs that never fire again. */
export const FINISHED = 'completed,failed,cancelled';

/**
 * The query of the sidebar's listing: the server filters on status, kind and the search text,
 * and sorts soonest fire first, as the list shows them, so finished jobs (no next fire) come
 * after every job still to fire. The notebook filter, "only notebooks with a pending recall"
 * and hiding finished jobs stay in the page (a job's notebook is also its target's path).
 */
export function listingQuery(
  filter: IFilter,
  cursor: string | null = null
): { [key: string]: string } {
  const query: { [key: string]: string } = { sort: 'next_fire_at', limit: String(PAGE_SIZE) };
  if (filter.status) {
    query.status = filter.status;
  }
  if (filter.kind) {
    query.kind = filter.kind;
  }
  const text = filter.query.trim();
  if (text) {
    query.q = text;
  }
  if (cursor) {
    query.cursor = cursor;
  }
  return query;
}

/**
 * The listing query of the finished jobs the filters select, for Clear finished and the count
 * of those hidden: the finished statuses (or the one chosen), the kind and the search text,
 * as the server filters them. Null when the status chosen is not a finished one: none is
 * selected. The notebook filters stay in the page (`inNotebookFilters` in state.ts).
 */
export function finishedQuery(filter: IFilter): { [key: string]: string } | null {
  if (filter.status && !FINISHED.split(',').includes(filter.status)) {
    return null;
  }
  const query: { [key: string]: string } = { status: filter.status || FINISHED };
  if (filter.kind) {
    query.kind = filter.kind;
  }
  const text = filter.query.trim();
  if (text) {
    query.q = text;
  }
  return query;
}

/** What the status bar shows, from the server's counts: runs going, jobs waiting to fire. */
export function statusCounts(counts: IJobCounts): { running: number; pending: number } {
  const active = counts.by_status.active ?? 0;
  return { running: counts.running, pending: Math.max(active - counts.running, 0) };
}

/** How many of the user's jobs never fire again, from the server's counts. */
export function finishedCount(counts: IJobCounts): number {
  return FINISHED.split(',').reduce((sum, status) => sum + (counts.by_status[status] ?? 0), 0);
}
