import { ISignal, Signal } from '@lumino/signaling';

import { RecallApi } from './api';
import {
  applyChange,
  emptyFilter,
  emptyState,
  IChangeEvent,
  IFilter,
  IJob,
  IRun,
  IState,
  mergeJobs,
  outputGap,
  staleWatcher,
  withFetchedRun,
  withFetchedRuns,
  withJobs,
  withWatcher,
  withWatchers
} from './state';

/**
 * The sidebar's live state: loaded from REST, then kept current by change events. Views read
 * `state` and redraw on `changed`.
 */
export class RecallModel {
  constructor(readonly api: RecallApi) {}

  state: IState = emptyState();
  filter: IFilter = emptyFilter();
  selectedJob: string | null = null;
  selectedRun: string | null = null;
  error = '';

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Full re-sync from REST: at start and after the event stream was lost. */
  async refresh(): Promise<void> {
    try {
      // Fetch first, then merge into the state as it is now: events may land meanwhile.
      const [jobs, watchers] = await Promise.all([this.api.jobs(), this.api.watchers()]);
      this.state = withWatchers(withJobs(this.state, jobs), watchers);
      const selected = this.selectedJob;
      if (selected && this.state.jobs[selected]) {
        const runs = await this.api.runs(selected);
        this.state = withFetchedRuns(this.state, selected, runs);
      }
      this.error = '';
    } catch (error) {
      this.error = `Could not load jobs: ${(error as Error).message}`;
    }
    this._changed.emit();
    await Promise.all(Object.keys(this.state.watchers).map(id => this._fetchWatcher(id)));
  }

  /** A watcher with its last check: after a listing, and when one of its checks ended. */
  private async _fetchWatcher(id: string): Promise<void> {
    try {
      this.state = withWatcher(this.state, await this.api.watcher(id));
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
      this.error = `Could not load runs: ${(error as Error).message}`;
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
      this.error = `Could not load run: ${(error as Error).message}`;
    } finally {
      this._fetching.delete(run.id);
    }
    this._changed.emit();
  }

  async act(job: IJob, action: string): Promise<void> {
    try {
      await this.api.act(job.id, action);
      this.error = '';
      // The change events bring the new state; runs of a trigger show once selected.
      if (action === 'trigger' && this.selectedJob !== job.id) {
        await this.select(job.id);
      }
    } catch (error) {
      this.error = `${action} ${job.name}: ${(error as Error).message}`;
    }
    this._changed.emit();
  }

  /** A new schedule for a job; the server's job.updated event brings the change. */
  async reschedule(job: IJob, when: string): Promise<void> {
    await this.api.update(job.id, { when });
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
  }

  private _changed = new Signal<this, void>(this);
  private _fetching = new Set<string>();
}
