import { Widget } from '@lumino/widgets';

import { JobDetails } from './details';
import { ACTION_LABELS, h } from './dom';
import { JobForm } from './form';
import { pendingClock } from './icons';
import { RecallModel } from './model';
import { NotificationList, WatcherList } from './panels';
import {
  formatRelative,
  IJob,
  JOB_KINDS,
  JOB_STATUSES,
  jobActions,
  jobNotebooks,
  notebookOf,
  notebooksWithPendingRecalls,
  visibleJobs
} from './state';

function options(all: string, values: readonly string[]): HTMLOptionElement[] {
  return [h('option', { value: '' }, all), ...values.map(v => h('option', { value: v }, v))];
}

/**
 * The Recall sidebar: search and filters (status, kind, notebook, only notebooks with a
 * pending recall), the user's jobs with their actions, the selected job's schedule editor and
 * run history, the watchers with their last results, the notifications, and the form creating
 * a job for the current notebook.
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
    this.node.append(
      this._header(),
      this._error,
      this._list,
      this._details.node,
      this._watchers.node,
      this._notifications.node,
      form.node
    );
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
      ...options('All statuses', JOB_STATUSES)
    );
    const kind = h(
      'select',
      {
        class: 'jp-RecallSidebar-kind',
        'aria-label': 'Filter by kind',
        onChange: () => this.model.setFilter({ kind: kind.value })
      },
      ...options('All kinds', JOB_KINDS)
    );
    const pending = h('input', {
      type: 'checkbox',
      class: 'jp-RecallSidebar-pendingOnly',
      onChange: () => this.model.setFilter({ pendingOnly: pending.checked })
    });
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
      kind,
      this._notebook,
      h(
        'label',
        { class: 'jp-RecallSidebar-pendingLabel' },
        pending,
        pendingClock(null),
        ' Only notebooks with a pending recall'
      ),
      refresh
    );
  }

  /** The notebook filter's choices follow the jobs; the choice stays while it has jobs. */
  private _renderNotebooks(): void {
    const chosen = this.model.filter.notebook;
    const paths = jobNotebooks(this.model.state);
    if (chosen && !paths.includes(chosen)) {
      paths.push(chosen);
    }
    this._notebook.replaceChildren(...options('All notebooks', paths));
    this._notebook.value = chosen;
  }

  private _render(): void {
    const { model } = this;
    this._error.textContent = model.error;
    this._error.hidden = !model.error;
    this._renderNotebooks();
    const jobs = visibleJobs(model.state, model.filter);
    const pending = notebooksWithPendingRecalls(model.state);
    const now = new Date();
    this._list.replaceChildren(
      ...(jobs.length
        ? jobs.map(job => this._job(job, now, pending))
        : [h('li', { class: 'jp-RecallSidebar-empty' }, 'No jobs')])
    );
    this._details.render(now);
    this._watchers.render(now);
    this._notifications.render(now);
  }

  private _actions(job: IJob): HTMLElement[] {
    return jobActions(job).map(action =>
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
  }

  /** The job's notebook, with a clock when that notebook has a pending recall. */
  private _notebookLine(job: IJob, pending: Set<string>): HTMLElement | null {
    const path = notebookOf(job);
    if (!path) {
      return null;
    }
    const marked = pending.has(path);
    return h(
      'div',
      {
        class: 'jp-RecallSidebar-notebook',
        'data-pending-recall': marked ? 'true' : 'false'
      },
      marked ? pendingClock(`${path} has a pending recall`) : null,
      path
    );
  }

  private _job(job: IJob, now: Date, pending: Set<string>): HTMLElement {
    const selected = job.id === this.model.selectedJob;
    const next = job.next_fire_at
      ? `next ${formatRelative(job.next_fire_at, now)} (${new Date(job.next_fire_at).toLocaleString()})`
      : 'no next fire';
    const toggle = () => void this.model.select(selected ? null : job.id);
    return h(
      'li',
      {
        class: `jp-RecallSidebar-job${selected ? ' jp-mod-selected' : ''}`,
        'data-job-id': job.id,
        'data-status': job.status,
        'data-kind': job.kind,
        'aria-selected': selected ? 'true' : 'false',
        'aria-label': `${job.kind} ${job.name}, ${job.status}`,
        tabindex: '0',
        onClick: toggle,
        onKeyDown: (event: Event) => {
          if ((event as KeyboardEvent).key === 'Enter' && event.target === event.currentTarget) {
            toggle();
          }
        }
      },
      h(
        'div',
        { class: 'jp-RecallSidebar-jobTitle' },
        h('span', { class: 'jp-RecallSidebar-name' }, job.name),
        job.kind !== 'job' ? h('span', { class: 'jp-RecallSidebar-kindTag' }, job.kind) : null,
        h('span', { class: `jp-RecallSidebar-badge jp-mod-${job.status}` }, job.status)
      ),
      h('div', { class: 'jp-RecallSidebar-description' }, job.description),
      this._notebookLine(job, pending),
      h('div', { class: 'jp-RecallSidebar-next' }, next),
      job.last_error ? h('div', { class: 'jp-RecallSidebar-lastError' }, job.last_error) : null,
      h('div', { class: 'jp-RecallSidebar-actions' }, ...this._actions(job))
    );
  }

  private _error = h('div', { class: 'jp-RecallSidebar-error', role: 'alert' });
  private _notebook = h('select', {
    class: 'jp-RecallSidebar-notebookFilter',
    'aria-label': 'Filter by notebook',
    onChange: () => this.model.setFilter({ notebook: this._notebook.value })
  });
  private _list = h('ul', { class: 'jp-RecallSidebar-jobs', 'aria-label': 'Jobs' });
  private _details = new JobDetails(this.model);
  private _watchers = new WatcherList(this.model);
  private _notifications = new NotificationList(this.model);
}
