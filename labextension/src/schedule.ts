import { IErrorBody } from './api';
import { h } from './dom';
import { RecallModel } from './model';
import { browserZone } from './time';

const PREVIEW_DELAY_MS = 300;

/** Numbers the previews, for the id the field's aria-describedby names. */
let previews = 0;

/**
 * A time expression field with a live preview: as the user types, the server checks it
 * (POST /api/recall/parse with `check`) and the schedule in words and its next fire times show
 * below, or why it does not parse. Used by the New job form and by the schedule editor of a job.
 */
export class SchedulePreview {
  constructor(
    readonly model: RecallModel,
    label: string
  ) {
    this.input = h('input', {
      type: 'text',
      name: 'when',
      placeholder: model.trans.__('in 10 min, every day at 09:00, 0 9 * * 1'),
      required: true,
      'aria-label': label,
      onInput: () => this.schedule()
    });
    this.preview.setAttribute('aria-label', model.trans.__('Schedule preview'));
    // The field is described by the preview: its parse error is read with it.
    this.preview.id = `jp-RecallForm-preview-${++previews}`;
    this.input.setAttribute('aria-describedby', this.preview.id);
    this.zoneNote = h(
      'div',
      { class: 'jp-RecallForm-zone' },
      model.trans.__('times in %1', this.zone)
    );
  }

  readonly input: HTMLInputElement;
  /** The zone the expression is read in (the browser's), sent with the check and the job. */
  readonly zone = browserZone();
  /** Says which zone that is, under the field. */
  readonly zoneNote: HTMLElement;
  /** Told whether the expression parses, after each check (Save and Create follow it). */
  onValidity: (valid: boolean) => void = () => undefined;
  readonly preview = h('div', { class: 'jp-RecallForm-preview', 'aria-live': 'polite' });

  get value(): string {
    return this.input.value.trim();
  }

  set value(when: string) {
    this.input.value = when;
    this.schedule();
  }

  /** Parses the expression after a pause in typing. */
  schedule(): void {
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => void this.parseNow(), PREVIEW_DELAY_MS);
  }

  async parseNow(): Promise<void> {
    const when = this.value;
    const asked = ++this._asked;
    if (!when) {
      this.preview.replaceChildren();
      this._invalid(false);
      this.onValidity(true);
      return;
    }
    try {
      const checked = await this.model.api.check(when, this.zone);
      if (asked !== this._asked) {
        return;
      }
      this._invalid(!checked.valid);
      this.onValidity(checked.valid);
      if (!checked.valid) {
        this.showError(checked.error);
        return;
      }
      const now = new Date();
      this.preview.className = 'jp-RecallForm-preview';
      // A one-shot's description is its instant in the server's zone: the list below shows it.
      const words = checked.kind === 'once' ? this.model.trans.__('once') : checked.description;
      this.preview.replaceChildren(
        h('div', {}, words),
        h(
          'ul',
          { 'aria-label': this.model.trans.__('Next fire times') },
          ...checked.next_fire_times.map(t =>
            h('li', { title: this.model.fullTime(t) }, this.model.time(t, now))
          )
        )
      );
    } catch (error) {
      if (asked === this._asked) {
        this._invalid(true);
        this.showError({ message: (error as Error).message });
      }
    }
  }

  /** Why it does not parse on one line; the accepted forms behind a disclosure. */
  showError(error: IErrorBody): void {
    const [reason] = error.message.split('\n', 1);
    const accepted = error.accepted ?? [];
    this.preview.className = 'jp-RecallForm-preview jp-mod-error';
    const line = h('div', { class: 'jp-RecallForm-reason' }, reason);
    if (!accepted.length) {
      this.preview.replaceChildren(line);
      return;
    }
    this.preview.replaceChildren(
      line,
      h(
        'details',
        { class: 'jp-RecallForm-accepted' },
        h('summary', {}, this.model.trans.__('Accepted forms')),
        h('ul', {}, ...accepted.map(form => h('li', {}, form)))
      )
    );
  }

  /** aria-invalid on the field while its expression does not parse. */
  private _invalid(invalid: boolean): void {
    if (invalid) {
      this.input.setAttribute('aria-invalid', 'true');
    } else {
      this.input.removeAttribute('aria-invalid');
    }
  }

  private _asked = 0;
  private _timer = 0;
}
