import { actionLabel, allows } from './actions';
import { h } from './dom';
import { label, runStatusLabels, runTriggerLabels } from './labels';
import { RecallModel } from './model';
import { SchedulePreview } from './schedule';
import { attemptOf, formatDuration, IJob, IRun } from './state';

/**
 * The selected job: its schedule editor (a new time expression with a live preview of the next
 * fire times) and its run history, each run opening on its output. The editor's nodes live as
 * long as the view, so a redraw from a live event does not take the text being typed.
 */
export class JobDetails {
  constructor(readonly model: RecallModel) {
    const { trans } = model;
    this._editor = new SchedulePreview(model, trans.__('New schedule'));
    this._editButton = h(
      'button',
      { class: 'jp-RecallSidebar-edit', type: 'button', onClick: () => this._open() },
      actionLabel('edit', trans)
    );
    this._editForm = h(
      'form',
      {
        class: 'jp-RecallSidebar-editSchedule',
        'aria-label': trans.__('Edit schedule'),
        onSubmit: (event: Event) => void this._save(event)
      },
      h('label', {}, trans.__('New schedule'), this._editor.input),
      this._editor.zoneNote,
      this._editor.preview,
      h(
        'div',
        { class: 'jp-RecallSidebar-actions' },
        this._saveButton,
        h(
          'button',
          { type: 'button', class: 'jp-RecallSidebar-discard', onClick: () => this._close(true) },
          trans.__('Discard')
        )
      ),
      this._editStatus
    );
    this._saveButton.textContent = trans.__('Save');
    // Escape leaves the editor as it leaves a rename in JupyterLab's file browser.
    this._editor.input.addEventListener('keydown', (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        this._close(true);
      }
    });
    this._editor.onValidity = valid => (this._saveButton.disabled = !valid);
    this.node.setAttribute('aria-label', trans.__('Selected job'));
    this.node.append(
      this._title,
      this._editButton,
      this._editForm,
      h('h4', {}, trans.__('Runs')),
      this._runs
    );
  }

  readonly node = h('section', { class: 'jp-RecallSidebar-history' });

  render(now: Date): void {
    const jobId = this.model.selectedJob;
    const job = jobId ? this.model.state.jobs[jobId] : undefined;
    this.node.hidden = !job;
    if (this._editing && this._editing !== jobId) {
      this._close();
    }
    if (!job) {
      return;
    }
    this._title.textContent = job.name;
    this._editButton.hidden = !allows(job, 'edit') || this._editing === job.id;
    this._editButton.setAttribute(
      'aria-label',
      this.model.trans.__('Edit the schedule of %1', job.name)
    );
    this._editForm.hidden = this._editing !== job.id;
    const runs = this.model.state.runs[job.id] ?? [];
    this._runs.replaceChildren(
      runs.length
        ? h('ul', { class: 'jp-RecallSidebar-runs' }, ...runs.map(run => this._run(run, now)))
        : h('p', { class: 'jp-RecallSidebar-empty' }, this.model.trans.__('No runs yet'))
    );
  }

  private _open(): void {
    const job = this._job();
    if (!job) {
      return;
    }
    this._editing = job.id;
    this._editor.value = job.when;
    this._editStatus.textContent = '';
    this.render(new Date());
    this._editor.input.focus();
  }

  /**
   * Closes the editor and shows "Edit schedule" again (for the job still selected); with
   * `focus`, the keyboard focus goes back to that button rather than to the page.
   */
  private _close(focus = false): void {
    this._editing = null;
    this._editForm.hidden = true;
    this._editStatus.textContent = '';
    const job = this._job();
    this._editButton.hidden = !job || !allows(job, 'edit');
    if (focus && !this._editButton.hidden) {
      this._editButton.focus();
    }
  }

  private async _save(event: Event): Promise<void> {
    event.preventDefault();
    const job = this._job();
    if (!job) {
      return;
    }
    try {
      await this.model.reschedule(job, this._editor.value, this._editor.zone);
      this._close(true);
      this.render(new Date());
    } catch (error) {
      this._editStatus.textContent = (error as Error).message;
    }
  }

  private _job(): IJob | undefined {
    const jobId = this.model.selectedJob;
    return jobId ? this.model.state.jobs[jobId] : undefined;
  }

  /** 'attempt 2/3' for a run of a job that retries (or a retry): see attemptOf. */
  private _attempt(run: IRun): string {
    const found = attemptOf(run, this._job());
    if (found === null) {
      return '';
    }
    const [attempt, attempts] = found;
    return attempts === null
      ? this.model.trans.__('attempt %1', attempt)
      : this.model.trans.__('attempt %1/%2', attempt, attempts);
  }

  private _run(run: IRun, now: Date): HTMLElement {
    const open = run.id === this.model.selectedRun;
    const when = run.started_at ?? run.scheduled_for;
    const duration = run.duration ?? null;
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
        h(
          'span',
          { class: `jp-RecallSidebar-badge jp-mod-${run.status}`, 'data-status': run.status },
          label(runStatusLabels(this.model.trans), run.status)
        ),
        // A space after the badge: the button's name reads 'failed 8 sec ago', not 'failed8'.
        ' ',
        h(
          'span',
          {
            class: 'jp-RecallSidebar-runMeta',
            title: this.model.fullTime(when),
            'data-trigger': run.trigger
          },
          [
            this.model.time(when, now),
            label(runTriggerLabels(this.model.trans), run.trigger),
            formatDuration(duration),
            this._attempt(run),
            run.retry_at
              ? this.model.trans.__('retry at %1', this.model.time(run.retry_at, now))
              : ''
          ]
            .filter(Boolean)
            .join(' · ')
        )
      ),
      open && run.error ? h('pre', { class: 'jp-RecallSidebar-runError' }, run.error) : null,
      open
        ? h(
            'pre',
            { class: 'jp-RecallSidebar-output', 'aria-label': this.model.trans.__('Run output') },
            run.output === undefined
              ? this.model.trans.__('Loading…')
              : run.output || this.model.trans.__('(no output)')
          )
        : null
    );
  }

  private _editing: string | null = null;
  private _editor: SchedulePreview;
  private _editForm: HTMLFormElement;
  private _title = h('h3', {});
  private _saveButton = h('button', { type: 'submit', class: 'jp-RecallSidebar-save' });
  private _editButton: HTMLButtonElement;
  private _editStatus = h('div', { class: 'jp-RecallForm-status jp-mod-error', role: 'alert' });
  private _runs = h('div', {});
}
