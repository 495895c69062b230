import { h } from './dom';
import { RecallModel } from './model';
import { SchedulePreview } from './schedule';

/**
 * Creates a code job for the current notebook's kernel (or a headless kernel), with a live
 * preview of the time expression as the server parses it.
 */
export class JobForm {
  constructor(
    readonly model: RecallModel,
    readonly currentPath: () => string | null
  ) {
    this.node = h(
      'form',
      { class: 'jp-RecallForm', 'aria-label': 'New job', onSubmit: (e: Event) => this._submit(e) },
      h('h3', {}, 'New job'),
      this._notebook,
      h('label', {}, 'When', this._when.input),
      this._when.preview,
      h('label', {}, 'Name', this._name),
      h('label', {}, 'Code', this._code),
      h('label', {}, 'Runs in', this._target),
      h('button', { type: 'submit', class: 'jp-RecallForm-create' }, 'Create'),
      this._status
    );
    this.update();
  }

  readonly node: HTMLFormElement;

  /** Shows which notebook the job is for (called when the current widget changes). */
  update(): void {
    const path = this.currentPath();
    this._notebook.textContent = path
      ? `For ${path}`
      : 'No notebook open: runs in a headless kernel';
    this._target.querySelector<HTMLOptionElement>('option[value="kernel"]')!.disabled = !path;
    if (!path) {
      this._target.value = 'headless';
    } else if (!this._targetChosen) {
      this._target.value = 'kernel';
    }
  }

  private async _submit(event: Event): Promise<void> {
    event.preventDefault();
    const path = this.currentPath();
    const target =
      this._target.value === 'kernel' && path
        ? { type: 'kernel', path }
        : { type: 'headless', kernel_name: 'python3' };
    const job: { [key: string]: unknown } = {
      when: this._when.value,
      action: { type: 'code', code: this._code.value },
      target
    };
    if (this._name.value.trim()) {
      job.name = this._name.value.trim();
    }
    try {
      const created = await this.model.api.create(job);
      this._status.textContent = `Created ${created.name}`;
      this._status.className = 'jp-RecallForm-status';
      this.model.apply({ type: 'job.created', job: created });
    } catch (error) {
      this._status.textContent = (error as Error).message;
      this._status.className = 'jp-RecallForm-status jp-mod-error';
    }
  }

  private _notebook = h('div', { class: 'jp-RecallForm-notebook' });
  private _when = new SchedulePreview(this.model.api, 'When');
  private _name = h('input', { type: 'text', name: 'name', placeholder: 'optional' });
  private _code = h('textarea', { name: 'code', rows: '3', required: true });
  private _target = h(
    'select',
    { name: 'target', onChange: () => (this._targetChosen = true) },
    h('option', { value: 'kernel' }, "this notebook's kernel"),
    h('option', { value: 'headless' }, 'a headless python3 kernel')
  );
  /** Whether the user picked where the job runs (else a notebook's kernel when one is open). */
  private _targetChosen = false;
  private _status = h('div', { class: 'jp-RecallForm-status', 'aria-live': 'polite' });
}
