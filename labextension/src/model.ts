import { ISignal, Signal } from '@lumino/signaling';

import { RecallApi } from './api';
import {
  applyChange,
  emptyState,
  IChangeEvent,
  IFilter,
  IJob,
  IRun,
  IState,
  mergeJobs,
  withJobs,
  withRuns
} from './state';

/**
 * The sidebar's live state: loaded from REST, then kept current by change events. Views read
 * `state` and redraw on `changed`.
 */
export class RecallModel {
  constructor(readonly api: RecallApi) {}

  state: IState = emptyState();
  filter: IFilter = { status: '', query: '' };
  selectedJob: string | null = null;
  selectedRun: string | null = null;
  error = '';

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Full re-sync from REST: at start and after the event stream was lost. */
  async refresh(): Promise<void> {
    try {
      this.state = withJobs(this.state, await this.api.jobs());
      const selected = this.selectedJob;
      if (selected && this.state.jobs[selected]) {
        this.state = withRuns(this.state, selected, await this.api.runs(selected));
      }
      this.error = '';
    } catch (error) {
      this.error = `Could not load jobs: ${(error as Error).message}`;
    }
    this._changed.emit();
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
  }

  async select(jobId: string | null, runId: string | null = null): Promise<void> {
    this.selectedJob = jobId;
    this.selectedRun = runId;
    this._changed.emit();
    if (!jobId) {
      return;
    }
    try {
      this.state = withRuns(this.state, jobId, await this.api.runs(jobId));
    } catch (error) {
      this.error = `Could not load runs: ${(error as Error).message}`;
    }
    this._changed.emit();
  }

  /** The selected run with its whole output (runs in a listing may lack it). */
  async showRun(run: IRun): Promise<void> {
    this.selectedRun = this.selectedRun === run.id ? null : run.id;
    this._changed.emit();
    if (this.selectedRun && run.output === undefined) {
      const full = await this.api.run(run.id);
      const runs = (this.state.runs[run.job_id] ?? []).map(r => (r.id === run.id ? { ...r, ...full } : r));
      this.state = withRuns(this.state, run.job_id, runs);
      this._changed.emit();
    }
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

  setFilter(filter: Partial<IFilter>): void {
    this.filter = { ...this.filter, ...filter };
    this._changed.emit();
  }

  private _changed = new Signal<this, void>(this);
}
