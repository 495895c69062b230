import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { actionLabel, buttonActions } from './actions';
import { confirmCancel, confirmDelete } from './confirm';
import { JobDetails } from './details';
import { h, replaceKeepingFocus } from './dom';
import { JobForm } from './form';
import { pendingClock } from './icons';
import { jobKindLabels, jobStatusLabels, label } from './labels';
import { RecallModel } from './model';
import { NotificationList, WatcherList } from './panels';
import {
  FINISHED_STATUSES,
  IJob,
  JOB_KINDS,
  JOB_STATUSES,
  jobNotebooks,
  notebookOf,
  notebooksWithPendingRecalls,
  oneShotInstant,
  visibleJobs
} from './state';
import { ITickSubscription, ticker } from './time';

/** A select's options: "All …" first, then each value shown by its word in `labels`. */
function options(
  all: string,
  values: readonly string[],
  labels: { [value: string]: string } = {}
): HTMLOptionElement[] {
  return [
    h('option', { value: '' }, all),
    ...values.map(v => h('option', { value: v }, label(labels, v)))
  ];
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
    const { trans } = model;
    this.id = 'jupyter-recall-sidebar';
    this.addClass('jp-RecallSidebar');
    this.title.caption = trans.__('Recall: scheduled jobs');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Recall jobs'));
    this._notebook.setAttribute('aria-label', trans.__('Filter by notebook'));
    this._list.setAttribute('aria-label', trans.__('Jobs'));
    this._clearFinished = h(
      'button',
      {
        type: 'button',
        class: 'jp-RecallSidebar-clearFinished',
        onClick: () => void this._confirmClearFinished()
      },
      trans.__('Clear finished')
    );
    this._loadMore = h(
      'button',
      {
        type: 'button',
        class: 'jp-RecallSidebar-loadMore',
        onClick: () => void this.model.loadMore()
      },
      trans.__('Load more')
    );
    this.node.append(
      this._header(),
      this._error,
      this._list,
      this._loadMore,
      h('div', { class: 'jp-RecallSidebar-finished' }, this._finishedNote, this._clearFinished),
      this._details.node,
      this._watchers.node,
      this._notifications.node,
      form.node
    );
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopTicking();
    super.dispose();
  }

  /** Relative times ("in 3 min") move on while the sidebar shows, with no event to redraw. */
  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this._startTicking();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._startTicking();
    this._render();
  }

  protected onBeforeHide(msg: Message): void {
    super.onBeforeHide(msg);
    this._stopTicking();
  }

  protected onBeforeDetach(msg: Message): void {
    super.onBeforeDetach(msg);
    this._stopTicking();
  }

  /** Redraws on the page's shared ticker (every TICK_MS) until `_stopTicking`. */
  private _startTicking(): void {
    this._stopTicking();
    this._tick = ticker.subscribe(() => this._render());
  }

  private _stopTicking(): void {
    this._tick?.dispose();
    this._tick = null;
  }

  /**
   * Asks first, naming how many, then deletes the finished jobs the search and filters select
   * (with their run history). The jobs are read before the dialog, so it names what goes.
   */
  private async _confirmClearFinished(): Promise<void> {
    const { trans } = this.model;
    let jobs: IJob[];
    try {
      jobs = await this.model.finishedSelection();
    } catch (error) {
      this.model.error = trans.__('Could not load jobs: %1', (error as Error).message);
      this._render();
      return;
    }
    const count = jobs.length;
    const answer = await showDialog({
      title: trans.__('Clear finished jobs'),
      body: trans._n(
        'Delete %1 completed, failed or cancelled job and its run history?',
        'Delete %1 completed, failed or cancelled jobs and their run history?',
        count
      ),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Keep') }),
        Dialog.warnButton({ label: trans.__('Delete') })
      ],
      // Enter keeps them: the safe answer is the one a stray key gives.
      defaultButton: 0
    });
    if (answer.button.accept) {
      await this.model.removeJobs(jobs);
    }
    // Not the page: the button while it shows, else the list, else the filters.
    this._focusInList(this._clearFinished.hidden ? null : this._clearFinished);
  }

  /** The focus on `element`, else on the first row listed, else on the status filter. */
  private _focusInList(element: HTMLElement | null): void {
    const target =
      element ?? this._list.querySelector<HTMLElement>('[data-job-id]') ?? this._statusFilter;
    target.focus({ preventScroll: true });
  }

  /**
   * After an action on a job whose dialog took the focus: back on the button of `action` in
   * its row, or the row; when the row went, on a row that was next to it (`near`), else on the
   * status filter. A row going later (its event) hands the focus on (replaceKeepingFocus).
   */
  private _focusJob(jobId: string, action: string, near: string[]): void {
    const row = this._rowOf(jobId);
    if (row) {
      const button = row.querySelector<HTMLElement>(`[data-action="${action}"]`);
      (button ?? row).focus({ preventScroll: true });
      return;
    }
    const neighbour = near.map(id => this._rowOf(id)).find(Boolean) ?? null;
    this._focusInList(neighbour);
  }

  /** The ids of the rows after and before a job's row (where the focus goes if it leaves). */
  private _near(jobId: string): string[] {
    const row = this._rowOf(jobId);
    return [row?.nextElementSibling, row?.previousElementSibling]
      .map(element => element?.getAttribute('data-job-id'))
      .filter((id): id is string => !!id);
  }

  private _header(): HTMLElement {
    const { trans } = this.model;
    const search = h('input', {
      type: 'search',
      class: 'jp-RecallSidebar-search',
      placeholder: trans.__('Search jobs'),
      'aria-label': trans.__('Search jobs'),
      onInput: () => this.model.setFilter({ query: search.value })
    });
    const status = (this._statusFilter = h(
      'select',
      {
        class: 'jp-RecallSidebar-status',
        'aria-label': trans.__('Filter by status'),
        onChange: () => this.model.setFilter({ status: status.value })
      },
      ...options(trans.__('All statuses'), JOB_STATUSES, jobStatusLabels(trans))
    ));
    const kind = h(
      'select',
      {
        class: 'jp-RecallSidebar-kind',
        'aria-label': trans.__('Filter by kind'),
        onChange: () => this.model.setFilter({ kind: kind.value })
      },
      ...options(trans.__('All kinds'), JOB_KINDS, jobKindLabels(trans))
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
        title: trans.__('Reload from the server'),
        onClick: () => void this.model.refresh()
      },
      trans.__('Reload')
    );
    return h(
      'div',
      { class: 'jp-RecallSidebar-header' },
      h('h2', {}, trans.__('Recall')),
      search,
      status,
      kind,
      this._notebook,
      h(
        'label',
        { class: 'jp-RecallSidebar-pendingLabel' },
        pending,
        pendingClock(null),
        ` ${trans.__('Only notebooks with a pending recall')}`
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
    // Left as they are when unchanged: rebuilding the options closes the list a user has open.
    // With no notebook at all the list still has its "All notebooks".
    const shown = Array.from(this._notebook.options, option => option.value);
    const wanted = ['', ...paths];
    if (shown.length !== wanted.length || shown.some((value, i) => value !== wanted[i])) {
      this._notebook.replaceChildren(...options(this.model.trans.__('All notebooks'), paths));
    }
    this._notebook.value = chosen;
  }

  private _render(): void {
    const { model } = this;
    this._error.textContent = model.error;
    this._error.hidden = !model.error;
    this._renderNotebooks();
    const jobs = visibleJobs(model.state, model.filter, model.settings.hideFinished);
    // The selected job left the list (cancelled while finished jobs are hidden, filtered
    // out): its details go with it. One never listed (a notification's Show run) stays.
    const selected = model.selectedJob;
    const listed = selected !== null && jobs.some(job => job.id === selected);
    if (selected && !listed && this._listedSelection === selected) {
      this._listedSelection = null;
      void model.select(null); // redraws
      return;
    }
    this._listedSelection = listed ? selected : null;
    const pending = notebooksWithPendingRecalls(model.state);
    const now = new Date();
    replaceKeepingFocus(
      this._list,
      'data-job-id',
      jobs.length
        ? jobs.map(job => this._job(job, now, pending))
        : [h('li', { class: 'jp-RecallSidebar-empty' }, model.trans.__('No jobs'))],
      () => this._statusFilter
    );
    // The server has more jobs than the pages read so far.
    this._loadMore.hidden = !model.nextCursor;
    this._renderFinished(jobs);
    this._details.render(now);
    this._revealDetails();
    this._watchers.render(now);
    this._notifications.render(now);
  }

  /**
   * Brings a newly selected job's details into view: they follow every loaded row, so with a
   * long list they would open far below the row clicked. At the top of the sidebar, leaving
   * room below for the runs still loading; nothing moves when they are already in view.
   */
  private _revealDetails(): void {
    const selected = this.model.selectedJob;
    if (selected === this._revealed) {
      return;
    }
    this._revealed = selected;
    const details = this._details.node;
    if (!selected || details.hidden) {
      return;
    }
    const shown = this.node.getBoundingClientRect();
    const box = details.getBoundingClientRect();
    if (box.top < shown.top || box.top + Math.min(box.height, 120) > shown.bottom) {
      details.scrollIntoView({ block: 'start' });
    }
  }

  /**
   * How many finished jobs the search and filters select but the list leaves out, and the
   * action clearing those they select.
   */
  private _renderFinished(shown: IJob[]): void {
    const { trans } = this.model;
    // Counted by the server (not only the pages loaded), as the filters select them.
    const finished = this.model.finishedSelected;
    const shownFinished = shown.filter(job => FINISHED_STATUSES.has(job.status)).length;
    const hidden = Math.max(finished - shownFinished, 0);
    this._finishedNote.textContent = hidden
      ? trans._n('%1 finished job hidden', '%1 finished jobs hidden', hidden)
      : '';
    const hide = finished === 0;
    if (hide && !this._clearFinished.hidden && document.activeElement === this._clearFinished) {
      // Hidden under the focus (its jobs deleted): the focus goes to the list, not the page.
      this._clearFinished.hidden = true;
      this._focusInList(null);
    }
    this._clearFinished.hidden = hide;
    this._clearFinished.setAttribute(
      'aria-label',
      trans._n('Clear %1 finished job', 'Clear %1 finished jobs', finished)
    );
  }

  private _actions(job: IJob): HTMLElement[] {
    const buttons = buttonActions(job).map(action => {
      const label = actionLabel(action, this.model.trans);
      return h(
        'button',
        {
          class: `jp-RecallSidebar-action jp-mod-${action}`,
          'data-action': action,
          'aria-label': this.model.trans.__('%1 %2', label, job.name),
          onClick: (event: Event) => {
            event.stopPropagation();
            if (action === 'cancel') {
              const near = this._near(job.id);
              void confirmCancel(this.model, job).then(() => this._focusJob(job.id, action, near));
            } else {
              void this.model.act(job, action);
            }
          }
        },
        label
      );
    });
    if (FINISHED_STATUSES.has(job.status)) {
      buttons.push(this._deleteButton(job));
    }
    return buttons;
  }

  /**
   * A finished job's Delete: asks first (Keep job by default), then deletes the job and its
   * run history (`DELETE /api/recall/jobs/{id}`); the focus goes to the next row (or the one
   * before), else to the status filter, not to the page.
   */
  private _deleteButton(job: IJob): HTMLButtonElement {
    const { trans } = this.model;
    const label = trans.__('Delete');
    return h(
      'button',
      {
        class: 'jp-RecallSidebar-action jp-mod-delete',
        'data-action': 'delete',
        'aria-label': trans.__('%1 %2', label, job.name),
        onClick: (event: Event) => {
          event.stopPropagation();
          const near = this._near(job.id);
          void confirmDelete(this.model, job).then(() => this._focusJob(job.id, 'delete', near));
        }
      },
      label
    );
  }

  /** The row of a job in the list drawn last, if listed. */
  private _rowOf(jobId: string): HTMLElement | null {
    return (
      Array.from(this._list.querySelectorAll<HTMLElement>('[data-job-id]')).find(
        row => row.getAttribute('data-job-id') === jobId
      ) ?? null
    );
  }

  /** The job whose runs fire this one: its name when it is listed, its id, the outcome. */
  private _upstreamLine(after: { job: string; on: string }): HTMLElement {
    const { trans } = this.model;
    const upstream = this.model.state.jobs[after.job];
    const name = upstream ? `${upstream.name} (${after.job})` : after.job;
    const verb: { [on: string]: string } = {
      succeeded: trans.__('succeeds'),
      failed: trans.__('fails'),
      finished: trans.__('finishes')
    };
    return h(
      'div',
      {
        class: 'jp-RecallSidebar-upstream',
        'data-upstream-id': after.job,
        title: trans.__('Fires each time a run of job %1 %2', after.job, verb[after.on] ?? after.on)
      },
      trans.__('after %1 %2', name, verb[after.on] ?? after.on)
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

  /**
   * The schedule in words. A one-shot's description is its instant in the server's zone: while
   * it is due the next line shows that instant as every time is shown (time.ts); once it is
   * not (finished, or paused), this line shows it so, never the server's UTC text.
   */
  private _scheduleLine(job: IJob, now: Date): HTMLElement | null {
    const instant = oneShotInstant(job);
    if (instant === null) {
      return h('div', { class: 'jp-RecallSidebar-description' }, job.description);
    }
    if (job.next_fire_at && job.status !== 'paused') {
      return null;
    }
    return h(
      'div',
      {
        class: 'jp-RecallSidebar-description',
        'data-once-at': instant,
        title: this.model.fullTime(instant)
      },
      this.model.trans.__('once: %1', this.model.time(instant, now))
    );
  }

  /** When the job fires next; a paused one says it does not (it has no next fire). */
  private _nextLine(job: IJob, now: Date): string {
    const { trans } = this.model;
    if (job.status === 'paused') {
      return trans.__('paused: does not fire');
    }
    return job.next_fire_at
      ? trans.__('next %1', this.model.time(job.next_fire_at, now))
      : trans.__('no next fire');
  }

  private _job(job: IJob, now: Date, pending: Set<string>): HTMLElement {
    const { trans } = this.model;
    const selected = job.id === this.model.selectedJob;
    const next = this._nextLine(job, now);
    const toggle = () => void this.model.select(selected ? null : job.id);
    const kind = label(jobKindLabels(trans), job.kind);
    const status = label(jobStatusLabels(trans), job.status);
    return h(
      'li',
      {
        class: `jp-RecallSidebar-job${selected ? ' jp-mod-selected' : ''}`,
        'data-job-id': job.id,
        'data-status': job.status,
        'data-kind': job.kind,
        // A row holds buttons, so it is no listbox option: aria-current marks the one selected.
        'aria-current': selected ? 'true' : false,
        'aria-label': trans.__('%1 %2, %3', kind, job.name, status),
        tabindex: '0',
        onClick: toggle,
        onKeyDown: (event: Event) => {
          const { key } = event as KeyboardEvent;
          if ((key === 'Enter' || key === ' ') && event.target === event.currentTarget) {
            event.preventDefault(); // Space would scroll the sidebar
            toggle();
          }
        }
      },
      h(
        'div',
        { class: 'jp-RecallSidebar-jobTitle' },
        h('span', { class: 'jp-RecallSidebar-name' }, job.name),
        job.kind !== 'job'
          ? h('span', { class: 'jp-RecallSidebar-kindTag', 'data-kind': job.kind }, kind)
          : null,
        h(
          'span',
          { class: `jp-RecallSidebar-badge jp-mod-${job.status}`, 'data-status': job.status },
          status
        )
      ),
      job.after ? this._upstreamLine(job.after) : this._scheduleLine(job, now),
      this._notebookLine(job, pending),
      h(
        'div',
        {
          class: 'jp-RecallSidebar-next',
          title: job.status === 'paused' ? '' : this.model.fullTime(job.next_fire_at)
        },
        next
      ),
      job.status === 'paused' && job.paused_reason
        ? h('div', { class: 'jp-RecallSidebar-pausedReason' }, job.paused_reason)
        : null,
      // Clamped to three lines (base.css): the whole error is its hover and the run's view.
      job.last_error
        ? h('div', { class: 'jp-RecallSidebar-lastError', title: job.last_error }, job.last_error)
        : null,
      h('div', { class: 'jp-RecallSidebar-actions' }, ...this._actions(job))
    );
  }

  private _error = h('div', { class: 'jp-RecallSidebar-error', role: 'alert' });
  private _notebook = h('select', {
    class: 'jp-RecallSidebar-notebookFilter',
    onChange: () => this.model.setFilter({ notebook: this._notebook.value })
  });
  private _list = h('ul', { class: 'jp-RecallSidebar-jobs' });
  private _statusFilter!: HTMLSelectElement;
  private _finishedNote = h('span', { class: 'jp-RecallSidebar-finishedNote' });
  private _clearFinished: HTMLButtonElement;
  private _loadMore: HTMLButtonElement;
  private _details = new JobDetails(this.model);
  private _tick: ITickSubscription | null = null;
  /** The selected job when it was in the list last drawn (else null). */
  private _listedSelection: string | null = null;
  /** The selected job whose details were brought into view. */
  private _revealed: string | null = null;
  private _watchers = new WatcherList(this.model);
  private _notifications = new NotificationList(this.model);
}
