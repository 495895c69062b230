import { h } from './dom';
import { RecallModel } from './model';
import { SchedulePreview } from './schedule';

/** Milliseconds after a command at which the cursor is put back in When if it went away. */
const FOCUS_AGAIN_MS = [100, 300];

/** What the form schedules: code (in a kernel), or a whole notebook run in a fresh kernel. */
type FormAction = { type: 'code' } | { type: 'notebook'; path: string };

/**
 * Creates a job: code for the current notebook's kernel (or a headless kernel), or a notebook
 * run in a fresh kernel ("Schedule this notebook…"), with a live preview of the time
 * expression as the server parses it.
 */
export class JobForm {
  constructor(
    readonly model: RecallModel,
    readonly currentPath: () => string | null
  ) {
    const { trans } = model;
    this._when = new SchedulePreview(model, trans.__('When'));
    this._fires = h(
      'select',
      { name: 'fires', onChange: () => this._firesChanged() },
      h('option', { value: 'time' }, trans.__('at a time')),
      h('option', { value: 'after' }, trans.__('after another job'))
    );
    // Each select has a name of its own: the label around both would name them alike.
    this._upstream = h('select', {
      name: 'after_job',
      'aria-label': trans.__('After job'),
      onChange: () => this._validity()
    });
    this._on = h(
      'select',
      { name: 'after_on', 'aria-label': trans.__('When that job') },
      h('option', { value: 'succeeded' }, trans.__('succeeds')),
      h('option', { value: 'failed' }, trans.__('fails')),
      h('option', { value: 'finished' }, trans.__('finishes'))
    );
    this._whenLabel = h('label', {}, trans.__('When'), this._when.input);
    this._afterLabel = h(
      'label',
      { class: 'jp-RecallForm-after' },
      trans.__('After'),
      this._upstream,
      this._on
    );
    this._target = h(
      'select',
      { name: 'target', onChange: () => (this._targetChosen = true) },
      h('option', { value: 'kernel' }, trans.__("this notebook's kernel")),
      h('option', { value: 'headless' }, trans.__('a fresh headless kernel'))
    );
    this._codeLabel = h('label', {}, trans.__('Code'), this._code);
    this._targetLabel = h('label', {}, trans.__('Runs in'), this._target);
    this._codeInstead = h(
      'button',
      { type: 'button', class: 'jp-RecallForm-codeInstead', onClick: () => this.scheduleCode() },
      trans.__('Schedule code instead')
    );
    this.node = h(
      'form',
      {
        class: 'jp-RecallForm',
        'aria-label': trans.__('New job'),
        onSubmit: (e: Event) => this._submit(e)
      },
      h('h3', {}, trans.__('New job')),
      this._notebook,
      h('label', {}, trans.__('Fires'), this._fires),
      this._whenLabel,
      this._when.zoneNote,
      this._when.preview,
      this._afterLabel,
      h('label', {}, trans.__('Name'), this._name),
      h('label', {}, trans.__('Time limit (s)'), this._timeout),
      h('label', {}, trans.__('Retries'), this._retries),
      h('label', {}, trans.__('Retry backoff (s)'), this._retryBackoff),
      h('label', {}, trans.__('Pause after failures'), this._pauseAfter),
      h('label', {}, trans.__('Keep runs'), this._keepRuns),
      h('label', {}, trans.__('Keep runs for'), this._keepFor),
      this._codeLabel,
      this._targetLabel,
      this._codeInstead,
      this._create,
      this._status
    );
    this._name.placeholder = trans.__('optional');
    this._timeout.placeholder = trans.__("server's default");
    this._timeout.title = trans.__(
      'A run still going after this many seconds is stopped and ends timed_out'
    );
    this._create.textContent = trans.__('Create');
    this._when.onValidity = valid => {
      this._whenValid = valid;
      this._validity();
    };
    this._afterLabel.hidden = true;
    this.update();
  }

  readonly node: HTMLFormElement;

  /** Shows which notebook the job is for (called when the current widget or settings change). */
  update(): void {
    const { trans } = this.model;
    const action = this._action;
    const notebookRun = action.type === 'notebook';
    const path = this._kernelPath ?? this.currentPath();
    if (action.type === 'notebook') {
      this._notebook.textContent = trans.__('Runs %1 in a fresh kernel', action.path);
    } else {
      this._notebook.textContent = path
        ? trans.__('For %1', path)
        : trans.__('No notebook open: runs in a headless kernel');
    }
    this._codeLabel.hidden = notebookRun;
    this._code.required = !notebookRun;
    this._targetLabel.hidden = notebookRun;
    this._codeInstead.hidden = !notebookRun;
    this._target.querySelector<HTMLOptionElement>('option[value="kernel"]')!.disabled = !path;
    if (!path) {
      this._target.value = 'headless';
    } else if (!this._targetChosen) {
      this._target.value = this.model.settings.defaultTarget;
    }
  }

  /** "at a time" or "after another job": the When field, or the upstream job and outcome. */
  private _firesChanged(): void {
    const after = this._fires.value === 'after';
    this._whenLabel.hidden = after;
    this._when.input.required = !after; // a hidden empty required field would block submitting
    this._when.preview.hidden = after;
    this._when.zoneNote.hidden = after;
    this._afterLabel.hidden = !after;
    if (after) {
      this._fillUpstreams();
    }
    this._validity();
  }

  /** The user's jobs that may still fire, as upstream choices (name and id). */
  private _fillUpstreams(): void {
    const chosen = this._upstream.value;
    const jobs = Object.values(this.model.state.jobs).filter(
      job => job.status === 'active' || job.status === 'paused'
    );
    this._upstream.replaceChildren(
      h('option', { value: '' }, this.model.trans.__('choose a job')),
      ...jobs.map(job => h('option', { value: job.id }, `${job.name} (${job.id})`))
    );
    this._upstream.value = jobs.some(job => job.id === chosen) ? chosen : '';
  }

  private _validity(): void {
    const after = this._fires.value === 'after';
    this._create.disabled = after ? !this._upstream.value : !this._whenValid;
  }

  /** When the job fires: its time expression, or the job whose outcome fires it. */
  private _schedule(): { [key: string]: unknown } {
    if (this._fires.value === 'after') {
      return { after: { job: this._upstream.value, on: this._on.value } };
    }
    return { when: this._when.value, tz: this._when.zone };
  }

  /**
   * A notebook run in a fresh kernel ("Schedule this notebook…"): the form starts afresh, to
   * fire at a time, named after the notebook, the cursor in When.
   */
  scheduleNotebook(path: string): void {
    this._action = { type: 'notebook', path };
    this._kernelPath = null;
    this._prepare(path.split('/').pop() ?? path);
  }

  /**
   * A code job; with a notebook, in that notebook's live kernel ("Schedule this cell…": the
   * form starts afresh, to fire at a time, with no name, the cursor in When), else back to the
   * form's ordinary code job ("Schedule code instead": a name the form gave the notebook run
   * goes, one typed stays).
   */
  scheduleCode(code?: string, notebookPath?: string): void {
    this._action = { type: 'code' };
    this._kernelPath = notebookPath ?? null;
    if (code !== undefined) {
      this._code.value = code;
    }
    if (notebookPath) {
      this._target.value = 'kernel';
      this._targetChosen = true;
    }
    const typed = this._name.value === this._givenName ? '' : this._name.value;
    this._prepare(code !== undefined ? '' : typed);
  }

  /**
   * Brings the form into view with the cursor in its time field. Again a moment later when the
   * focus went elsewhere meanwhile: a command run from the palette or a menu is followed by
   * JupyterLab giving the focus back to the current widget (the notebook).
   */
  focus(): void {
    const focusWhen = () => {
      if (this.node.isConnected && !this.node.contains(document.activeElement)) {
        this.node.scrollIntoView({ block: 'nearest' });
        this._when.input.focus();
      }
    };
    this.node.scrollIntoView({ block: 'nearest' });
    this._when.input.focus();
    requestAnimationFrame(() => requestAnimationFrame(focusWhen));
    for (const delay of FOCUS_AGAIN_MS) {
      window.setTimeout(focusWhen, delay);
    }
  }

  /** The form's starting state for a command: fires at a time, the name given, no status. */
  private _prepare(name: string): void {
    if (this._fires.value !== 'time') {
      this._fires.value = 'time';
      this._firesChanged();
    }
    this._name.value = name;
    this._givenName = name;
    this._status.textContent = '';
    this.update();
    this.focus();
  }

  private _job(): { [key: string]: unknown } {
    const action = this._action;
    if (action.type === 'notebook') {
      return {
        action: { type: 'notebook', path: action.path },
        // No kernel_name: the notebook runs in its own kernel spec.
        target: { type: 'headless' }
      };
    }
    const path = this._kernelPath ?? this.currentPath();
    const target =
      this._target.value === 'kernel' && path ? { type: 'kernel', path } : { type: 'headless' };
    return { action: { type: 'code', code: this._code.value }, target };
  }

  private async _submit(event: Event): Promise<void> {
    event.preventDefault();
    const job: { [key: string]: unknown } = { ...this._schedule(), ...this._job() };
    if (this._name.value.trim()) {
      job.name = this._name.value.trim();
    }
    if (this._timeout.value.trim()) {
      job.policies = { timeout: Number(this._timeout.value) };
    }
    const retries = this._retryPolicy();
    if (retries) {
      job.policies = { ...((job.policies as object) ?? {}), retries };
    }
    const lifecycle = this._lifecyclePolicies();
    if (Object.keys(lifecycle).length) {
      job.policies = { ...((job.policies as object) ?? {}), ...lifecycle };
    }
    try {
      const created = await this.model.api.create(job);
      this._status.textContent = this.model.trans.__('Created %1 (%2)', created.name, created.id);
      this._status.className = 'jp-RecallForm-status';
      this.model.apply({ type: 'job.created', job: created });
      this._reset();
      this._focusCreated(created.id);
    } catch (error) {
      this._status.textContent = (error as Error).message;
      this._status.className = 'jp-RecallForm-status jp-mod-error';
    }
  }

  /**
   * After a Create (a click leaves the focus on a button that is now disabled): the created
   * job's row when the sidebar lists it, else When, ready for the next entry.
   */
  private _focusCreated(jobId: string): void {
    const sidebar = this.node.closest('.jp-RecallSidebar');
    const row = Array.from(sidebar?.querySelectorAll<HTMLElement>('[data-job-id]') ?? []).find(
      element => element.getAttribute('data-job-id') === jobId
    );
    (row ?? this._when.input).focus({ preventScroll: true });
  }

  /** After a Create: the time and name go, so a second click does not make a duplicate. */
  private _reset(): void {
    this._when.value = '';
    this._name.value = '';
    this._whenValid = false;
    this._validity();
  }

  private _notebook = h('div', { class: 'jp-RecallForm-notebook' });
  private _fires: HTMLSelectElement;
  private _upstream: HTMLSelectElement;
  private _on: HTMLSelectElement;
  private _whenLabel: HTMLLabelElement;
  private _afterLabel: HTMLLabelElement;
  private _whenValid = false;
  private _create = h('button', { type: 'submit', class: 'jp-RecallForm-create' });
  private _when: SchedulePreview;
  private _name = h('input', { type: 'text', name: 'name' });
  private _timeout = h('input', {
    type: 'number',
    name: 'timeout',
    min: '0.001',
    step: 'any'
  });
  private _retries = h('input', {
    type: 'number',
    name: 'retries',
    min: '0',
    step: '1',
    placeholder: this.model.trans.__('none'),
    title: this.model.trans.__(
      'Run a failed, timed-out or interrupted occurrence again, up to this many times'
    )
  });
  private _retryBackoff = h('input', {
    type: 'number',
    name: 'retry_backoff',
    min: '0',
    step: 'any',
    placeholder: this.model.trans.__('10'),
    title: this.model.trans.__(
      'Seconds before the first retry; each further one waits twice as long'
    )
  });

  /** policies.retries from the Retries and Retry backoff fields (the server checks them). */
  private _retryPolicy(): { [key: string]: number } | null {
    if (!this._retries.value.trim()) {
      return null;
    }
    const retries: { [key: string]: number } = { max: Number(this._retries.value) };
    if (this._retryBackoff.value.trim()) {
      retries.backoff = Number(this._retryBackoff.value);
    }
    return retries;
  }

  private _pauseAfter = h('input', {
    type: 'number',
    name: 'pause_after_failures',
    min: '1',
    step: '1',
    placeholder: this.model.trans.__('never'),
    title: this.model.trans.__('Pause the job after this many consecutive failed occurrences')
  });
  private _keepRuns = h('input', {
    type: 'number',
    name: 'keep_runs',
    min: '0',
    step: '1',
    placeholder: this.model.trans.__("server's default"),
    title: this.model.trans.__('Keep this many newest runs of the job')
  });
  private _keepFor = h('input', {
    type: 'text',
    name: 'keep_runs_for',
    placeholder: this.model.trans.__("server's default"),
    title: this.model.trans.__(
      "Keep runs this long after they end: seconds, or '7d', '12h', '1h30'"
    )
  });

  /** pause_after_failures, keep_runs, keep_runs_for as typed (the server checks them). */
  private _lifecyclePolicies(): { [key: string]: unknown } {
    const policies: { [key: string]: unknown } = {};
    if (this._pauseAfter.value.trim()) {
      policies.pause_after_failures = Number(this._pauseAfter.value);
    }
    if (this._keepRuns.value.trim()) {
      policies.keep_runs = Number(this._keepRuns.value);
    }
    const keepFor = this._keepFor.value.trim();
    if (keepFor) {
      policies.keep_runs_for = /^[0-9.]+$/.test(keepFor) ? Number(keepFor) : keepFor;
    }
    return policies;
  }
  private _code = h('textarea', { name: 'code', rows: '3', required: true });
  private _codeLabel: HTMLLabelElement;
  private _target: HTMLSelectElement;
  private _targetLabel: HTMLLabelElement;
  private _codeInstead: HTMLButtonElement;
  private _action: FormAction = { type: 'code' };
  /** The notebook whose kernel a cell's code goes to (else the current notebook's). */
  private _kernelPath: string | null = null;
  /** The name the form itself gave (a notebook's file name), not one the user typed. */
  private _givenName = '';
  /** Whether the user picked where the job runs (else the default target setting decides). */
  private _targetChosen = false;
  private _status = h('div', { class: 'jp-RecallForm-status', 'aria-live': 'polite' });
}
