import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';

import { ACTION_ROUTES, actionLabel, JobAction } from './actions';
import { RecallApi } from './api';
import { Arrivals } from './arrivals';
import {
  FINISHED,
  finishedCount,
  finishedQuery,
  IJobCounts,
  listingQuery,
  statusCounts
} from './pages';
import { DEFAULT_SETTINGS, IRecallSettings } from './settings';
import {
  applyChange,
  emptyFilter,
  emptyState,
  finishedJobs,
  FINISHED_STATUSES,
  hasNotebookFilters,
  IChangeEvent,
  IFilter,
  IJob,
  IRun,
  inNotebookFilters,
  IState,
  jobCounts,
  mergeJobs,
  outputGap,
  staleWatcher,
  visibleJobs,
  withFetchedRun,
  withFetchedRuns,
  withListing,
  withWatcher,
  withWatchers
} from './state';
import { formatFull, formatTime } from './time';

/** Milliseconds of quiet before the filters typed are sent to the server. */
const REFETCH_DELAY = 250;
/** Milliseconds a burst of changes is given before the counts are read again. */
const COUNTS_DELAY = 500;
/** The changes that can move the status bar's counts (not each chunk of output). */
const COUNTED_EVENTS = new Set([
  'job.created',
  'job.updated',
  'job.deleted',
  'run.started',
  'run.finished'
]);

/** The finished query with no filter: every finished job (the server's counts of all jobs). */
const ALL_FINISHED = JSON.stringify({ status: FINISHED });

/**
 * The sidebar's live state: loaded from REST, then kept current by change events. Views read
 * `state` and redraw on `changed`.
 */
export class RecallModel {
  constructor(
    readonly api: RecallApi,
    readonly trans: TranslationBundle
  ) {}

  state: IState = emptyState();
  filter: IFilter = emptyFilter();
  selectedJob: string | null = null;
  selectedRun: string | null = null;
  error = '';
  /** The extension's settings; views redraw when they change. */
  settings: IRecallSettings = DEFAULT_SETTINGS;
  /** Where the next page of the listing starts; null when every matching job is loaded. */
  nextCursor: string | null = null;
  /** The server's counts of every job of the user (null until read). */
  jobCounts: IJobCounts | null = null;

  /** The status bar's figures: from the server's counts, or the jobs loaded until they come. */
  get counts(): { running: number; pending: number } {
    return this.jobCounts ? statusCounts(this.jobCounts) : jobCounts(this.state);
  }

  /** How many jobs never fire again, loaded or not. */
  get finishedCount(): number {
    return this.jobCounts ? finishedCount(this.jobCounts) : finishedJobs(this.state).length;
  }

  /**
   * How many finished jobs the search and filters select (Clear finished deletes those): the
   * server's count for the status, kind and search; the jobs loaded when a notebook filter is
   * on (the server does not apply it), or until the server's count comes.
   */
  get finishedSelected(): number {
    const query = finishedQuery(this.filter);
    if (!query) {
      return 0;
    }
    const key = JSON.stringify(query);
    if (!hasNotebookFilters(this.filter)) {
      if (key === ALL_FINISHED) {
        return this.finishedCount;
      }
      if (this._finishedCounts && this._finishedCounts.key === key) {
        return finishedCount(this._finishedCounts.counts);
      }
    }
    return visibleJobs(this.state, this.filter).filter(job => FINISHED_STATUSES.has(job.status))
      .length;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  setSettings(settings: IRecallSettings): void {
    this.settings = settings;
    this._changed.emit();
    this._refetchIfQueryChanged();
  }

  /** An instant as the settings show times (time.ts); '' for none. */
  time(iso: string | null | undefined, now: Date): string {
    return formatTime(iso, now, this.settings.timeFormat);
  }

  /** The instant's full reading with its zone, for a hover. */
  fullTime(iso: string | null | undefined): string {
    return iso ? formatFull(iso) : '';
  }

  /**
   * Full re-sync from REST: at start, after the event stream was lost and when the server's
   * filters change. The first page of the listing only (pages.ts): the sidebar opens as fast
   * with 100,000 jobs as with 10; `loadMore` reads the next.
   */
  async refresh(): Promise<void> {
    try {
      // Fetch first, then merge into the state as it is now: events may land meanwhile.
      const query = listingQuery(this.filter);
      const { answer, arrived } = await this._arrivals.during(() =>
        Promise.all([this.api.jobsPage(query), this.api.watchers()])
      );
      const [page, watchers] = answer;
      // The pending recalls the banner read for its notebook stay, in the page or not.
      const recalls = Object.values(this.state.jobs).filter(
        job => job.kind === 'recall' && job.pending
      );
      const listed = withListing(this.state, page.jobs, arrived);
      this.state = withWatchers(mergeJobs(listed, recalls), watchers);
      this.nextCursor = page.next_cursor;
      this._query = JSON.stringify(query);
      void this._refreshCounts();
      const selected = this.selectedJob;
      if (selected && this.state.jobs[selected]) {
        const runs = await this.api.runs(selected);
        this.state = withFetchedRuns(this.state, selected, runs);
      }
      this.error = '';
    } catch (error) {
      this.error = this.trans.__('Could not load jobs: %1', (error as Error).message);
    }
    this._changed.emit();
    await Promise.all(Object.keys(this.state.watchers).map(id => this._fetchWatcher(id)));
  }

  /** The next page of the listing, added to the jobs shown. */
  async loadMore(): Promise<void> {
    const cursor = this.nextCursor;
    if (!cursor || this._loadingMore) {
      return;
    }
    this._loadingMore = true;
    try {
      const query = listingQuery(this.filter, cursor);
      const page = await this.api.jobsPage(query);
      this.state = mergeJobs(this.state, page.jobs);
      this.nextCursor = page.next_cursor;
    } catch (error) {
      this.error = this.trans.__('Could not load jobs: %1', (error as Error).message);
    } finally {
      this._loadingMore = false;
    }
    this._changed.emit();
  }

  /** The status bar's figures from the server's counts (all jobs, not only those loaded). */
  private async _refreshCounts(): Promise<void> {
    // An earlier read answering after a later one would show counts older than the events.
    const asked = ++this._countsAsked;
    const query = finishedQuery(this.filter);
    const key = JSON.stringify(query);
    // The finished jobs the filters select, when they are not all of them (the counts below).
    const filtered = query && key !== ALL_FINISHED && !hasNotebookFilters(this.filter);
    try {
      const [counts, finished] = await Promise.all([
        this.api.counts(),
        filtered ? this.api.counts(query) : Promise.resolve(null)
      ]);
      if (asked === this._countsAsked) {
        this.jobCounts = counts;
        this._finishedCounts = finished ? { key, counts: finished } : this._finishedCounts;
        this._changed.emit();
      }
    } catch (error) {
      console.warn('jupyter-recall: counts', error);
    }
  }

  /** The listing again when what the server filters on changed (typing waits a moment). */
  private _refetchIfQueryChanged(): void {
    const query = JSON.stringify(listingQuery(this.filter));
    if (query === this._query) {
      return;
    }
    this._query = query;
    clearTimeout(this._refetchTimer);
    this._refetchTimer = setTimeout(() => void this.refresh(), REFETCH_DELAY);
  }

  /** A watcher with its last check: after a listing, and when one of its checks ended. */
  private async _fetchWatcher(id: string): Promise<void> {
    try {
      // Read the state after the answer: events applied while it was awaited must stay.
      const watcher = await this.api.watcher(id);
      this.state = withWatcher(this.state, watcher);
      this._changed.emit();
    } catch (error) {
      console.warn('jupyter-recall: watcher', id, error);
    }
  }

  /** The recalls of one notebook (the banner asks when a notebook becomes current). */
  async loadRecalls(path: string): Promise<void> {
    try {
      const jobs = await this.api.jobs({ kind: 'recall', path });
      this.state = mergeJobs(this.state, jobs);
      this._changed.emit();
    } catch (error) {
      console.warn('jupyter-recall: recalls of', path, error);
    }
  }

  apply(event: IChangeEvent): void {
    this._arrivals.record(event);
    if (COUNTED_EVENTS.has(event.type)) {
      // A burst of changes asks for the counts once.
      clearTimeout(this._countsTimer);
      this._countsTimer = setTimeout(() => void this._refreshCounts(), COUNTS_DELAY);
    }
    const next = applyChange(this.state, event);
    if (next !== this.state) {
      this.state = next;
      this._changed.emit();
    }
    // A chunk of the open run that could not be joined: its stored output fills the gap. At
    // its end the run is fetched once more, as a chunk may have fallen into a fetch under way.
    const run = event.run;
    if (
      run &&
      run.id === this.selectedRun &&
      (outputGap(this.state, event) || event.type === 'run.finished')
    ) {
      void this._fetchRun(run);
    }
    const watcher = staleWatcher(this.state, event);
    if (watcher) {
      void this._fetchWatcher(watcher);
    }
  }

  async select(jobId: string | null, runId: string | null = null): Promise<void> {
    this.selectedJob = jobId;
    this.selectedRun = runId;
    this._changed.emit();
    if (!jobId) {
      return;
    }
    try {
      const runs = await this.api.runs(jobId);
      this.state = withFetchedRuns(this.state, jobId, runs);
    } catch (error) {
      this.error = this.trans.__('Could not load runs: %1', (error as Error).message);
    }
    this._changed.emit();
  }

  /**
   * Opens (or closes) a run. Its whole output is fetched when a listing lacked it or the run is
   * still going; live chunks then join it by their offset.
   */
  async showRun(run: IRun): Promise<void> {
    this.selectedRun = this.selectedRun === run.id ? null : run.id;
    this._changed.emit();
    if (this.selectedRun && (run.output === undefined || !run.finished_at)) {
      await this._fetchRun(run);
    }
  }

  private async _fetchRun(run: IRun): Promise<void> {
    if (this._fetching.has(run.id)) {
      return;
    }
    this._fetching.add(run.id);
    try {
      const fetched = await this.api.run(run.id);
      this.state = withFetchedRun(this.state, fetched);
    } catch (error) {
      this.error = this.trans.__('Could not load run: %1', (error as Error).message);
    } finally {
      this._fetching.delete(run.id);
    }
    this._changed.emit();
  }

  async act(job: IJob, action: JobAction): Promise<void> {
    try {
      await this.api.act(job.id, ACTION_ROUTES[action]);
      this.error = '';
      // The change events bring the new state; runs of a trigger show once selected.
      if (action === 'run_now' && this.selectedJob !== job.id) {
        await this.select(job.id);
      }
    } catch (error) {
      const label = actionLabel(action, this.trans);
      this.error = this.trans.__('%1 %2: %3', label, job.name, (error as Error).message);
    }
    this._changed.emit();
  }

  /**
   * Deletes one finished job with its run history (the row's Delete, after its confirmation);
   * the job.deleted event takes it out of the list. Resolves true when it went.
   */
  async removeJob(job: IJob): Promise<boolean> {
    try {
      await this.api.remove(job.id);
      this.error = '';
      if (this.selectedJob === job.id) {
        this.selectedJob = null;
        this.selectedRun = null;
      }
      return true;
    } catch (error) {
      this.error = this.trans.__(
        '%1 %2: %3',
        this.trans.__('Delete'),
        job.name,
        (error as Error).message
      );
      return false;
    } finally {
      this._changed.emit();
    }
  }

  /**
   * Deletes the finished jobs the search and filters select (all of them with none), with their
   * run history; the job.deleted events take them out of the list. Returns how many went.
   */
  async clearFinished(): Promise<number> {
    return this.removeJobs(await this.finishedSelection());
  }

  /** Deletes jobs with their run history (after Clear finished's confirmation). */
  async removeJobs(jobs: IJob[]): Promise<number> {
    const results = await Promise.allSettled(jobs.map(job => this.api.remove(job.id)));
    const failed = results.filter(result => result.status === 'rejected');
    this.error = failed.length
      ? this.trans.__(
          'Could not delete %1 of %2 finished jobs: %3',
          failed.length,
          jobs.length,
          String((failed[0] as PromiseRejectedResult).reason?.message)
        )
      : '';
    this._changed.emit();
    return jobs.length - failed.length;
  }

  /**
   * The finished jobs the search and filters select, loaded or not: read from the server page
   * by page (status, kind, search), then kept by the notebook filters as the list keeps them.
   */
  async finishedSelection(): Promise<IJob[]> {
    const filter = this.filter;
    const query = finishedQuery(filter);
    if (!query) {
      return [];
    }
    const found: IJob[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.api.jobsPage(
        cursor ? { ...query, limit: '1000', cursor } : { ...query, limit: '1000' }
      );
      found.push(...page.jobs);
      cursor = page.next_cursor;
    } while (cursor);
    return inNotebookFilters(this.state, filter, found);
  }

  /**
   * A new schedule for a job, read in the zone `tz` (the browser's); the server's job.updated
   * event brings the change.
   */
  async reschedule(job: IJob, when: string, tz?: string): Promise<void> {
    await this.api.update(job.id, tz ? { when, tz } : { when });
    this.error = '';
    this._changed.emit();
  }

  clearNotifications(): void {
    this.state = { ...this.state, notifications: [] };
    this._changed.emit();
  }

  setFilter(filter: Partial<IFilter>): void {
    this.filter = { ...this.filter, ...filter };
    this._changed.emit();
    this._refetchIfQueryChanged();
  }

  private _changed = new Signal<this, void>(this);
  private _loadingMore = false;
  private _query = '';
  private _refetchTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  private _countsTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  private _countsAsked = 0;
  /** The server's counts of the finished jobs the filters select, and for which query. */
  private _finishedCounts: { key: string; counts: IJobCounts } | null = null;
  private _arrivals = new Arrivals<IChangeEvent>();
  private _fetching = new Set<string>();
}
