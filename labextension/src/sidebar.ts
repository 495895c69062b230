import { Widget } from '@lumino/widgets';

import { ACTION_LABELS, h } from './dom';
import { JobForm } from './form';
import { RecallModel } from './model';
import {
  formatDuration,
  formatRelative,
  IJob,
  IRun,
  JOB_STATUSES,
  jobActions,
  visibleJobs
} from './state';

/**
 * The Recall sidebar: search and status filter, the user's jobs with their actions, the run
 * history of the selected job, and the form creating a job for the current notebook.
 */
export class RecallSidebar extends Widget {
  constructor(
    readonly model: RecallModel,
    readonly form: JobForm
  ) {
    super();
    this.id = 'jupyter-recall-sidebar';
    this.addClass('jp-RecallSidebar');
    this.title.caption = 'Recall: scheduled jobs';
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'Recall jobs');
    this.node.append(this._header(), this._error, this._list, this._history, form.node);
    model.changed.connect(this._render, this);
    this._render();
  }

  private _header(): HTMLElement {
    const search = h('input', {
      type: 'search',
      class: 'jp-RecallSidebar-search',
      placeholder: 'Search jobs',
      'aria-label': 'Search jobs',
      onInput: () => this.model.setFilter({ query: search.value })
    });
    const status = h(
      'select',
      {
        class: 'jp-RecallSidebar-status',
        'aria-label': 'Filter by status',
        onChange: () => this.model.setFilter({ status: status.value })
      },
      h('option', { value: '' }, 'All statuses'),
      ...JOB_STATUSES.map(s => h('option', { value: s }, s))
    );
    const refresh = h(
      'button',
      {
        class: 'jp-RecallSidebar-refresh',
        title: 'Reload from the server',
        onClick: () => void this.model.refresh()
      },
      'Reload'
    );
    return h(
      'div',
      { class: 'jp-RecallSidebar-header' },
      h('h2', {}, 'Recall'),
      search,
      status,
      refresh
    );
  }

  private _render(): void {
    const { model } = this;
    this._error.textContent = model.error;
    this._error.hidden = !model.error;
    const jobs = visibleJobs(model.state, model.filter);
    const now = new Date();
    this._list.replaceChildren(
      ...(jobs.length
        ? jobs.map(job => this._job(job, now))
        : [h('li', { class: 'jp-RecallSidebar-empty' }, 'No jobs')])
    );
    this._renderHistory(now);
  }

  private _job(job: IJob, now: Date): HTMLElement {
    const selected = job.id === this.model.selectedJob;
    const next = job.next_fire_at
      ? `next ${formatRelative(job.next_fire_at, now)} (${new Date(job.next_fire_at).toLocaleString()})`
      : 'no next fire';
    const actions = jobActions(job).map(action =>
      h(
        'button',
        {
          class: `jp-RecallSidebar-action jp-mod-${action}`,
          'data-action': action,
          'aria-label': `${ACTION_LABELS[action]} ${job.name}`,
          onClick: (event: Event) => {
            event.stopPropagation();
            void this.model.act(job, action);
          }
        },
        ACTION_LABELS[action]
      )
    );
    return h(
      'li',
      {
        class: `jp-RecallSidebar-job${selected ? ' jp-mod-selected' : ''}`,
        'data-job-id': job.id,
        'data-status': job.status,
        'aria-selected': selected ? 'true' : 'false',
        tabindex: '0',
        onClick: () => void this.model.select(selected ? null : job.id),
        onKeyDown: (event: Event) => {
          if ((event as KeyboardEvent).key === 'Enter') {
            void this.model.select(selected ? null : job.id);
          }
        }
      },
      h(
        'div',
        { class: 'jp-RecallSidebar-jobTitle' },
        h('span', { class: 'jp-RecallSidebar-name' }, job.name),
        h('span', { class: `jp-RecallSidebar-badge jp-mod-${job.status}` }, job.status)
      ),
      h('div', { class: 'jp-RecallSidebar-description' }, job.description),
      h('div', { class: 'jp-RecallSidebar-next' }, next),
      job.last_error ? h('div', { class: 'jp-RecallSidebar-lastError' }, job.last_error) : null,
      h('div', { class: 'jp-RecallSidebar-actions' }, ...actions)
    );
  }

  private _renderHistory(now: Date): void {
    const jobId = this.model.selectedJob;
    const job = jobId ? this.model.state.jobs[jobId] : undefined;
    if (!job) {
      this._history.hidden = true;
      this._history.replaceChildren();
      return;
    }
    const runs = this.model.state.runs[job.id] ?? [];
    this._history.hidden = false;
    this._history.replaceChildren(
      h('h3', {}, `Runs of ${job.name}`),
      runs.length
        ? h('ul', { class: 'jp-RecallSidebar-runs' }, ...runs.map(run => this._run(run, now)))
        : h('p', { class: 'jp-RecallSidebar-empty' }, 'No runs yet')
    );
  }

  private _run(run: IRun, now: Date): HTMLElement {
    const open = run.id === this.model.selectedRun;
    const when = run.started_at ?? run.scheduled_for;
    return h(
      'li',
      {
        class: `jp-RecallSidebar-run jp-mod-${run.status}`,
        'data-run-id': run.id,
        'data-status': run.status
      },
      h(
        'button',
        {
          class: 'jp-RecallSidebar-runTitle',
          'aria-expanded': open ? 'true' : 'false',
          onClick: () => void this.model.showRun(run)
        },
        h('span', { class: `jp-RecallSidebar-badge jp-mod-${run.status}` }, run.status),
        ` ${formatRelative(when, now)} · ${run.trigger}`,
        run.duration !== undefined && run.duration !== null
          ? ` · ${formatDuration(run.duration)}`
          : ''
      ),
      open && run.error ? h('pre', { class: 'jp-RecallSidebar-runError' }, run.error) : null,
      open
        ? h(
            'pre',
            { class: 'jp-RecallSidebar-output' },
            run.output === undefined ? 'Loading…' : run.output || '(no output)'
          )
        : null
    );
  }

  private _error = h('div', { class: 'jp-RecallSidebar-error', role: 'alert' });
  private _list = h('ul', { class: 'jp-RecallSidebar-jobs', 'aria-label': 'Jobs' });
  private _history = h('section', {
    class: 'jp-RecallSidebar-history',
    'aria-label': 'Run history'
  });
}
