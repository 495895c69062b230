import { RecallApi } from './api';
import { h } from './dom';

const PREVIEW_DELAY_MS = 300;

/**
 * A time expression field with a live preview: as the user types, the server parses it
 * (POST /api/recall/parse) and the schedule in words and its next fire times show below.
 * Used by the New job form and by the schedule editor of a job.
 */
export class SchedulePreview {
  constructor(
    readonly api: RecallApi,
    label: string
  ) {
    this.input = h('input', {
      type: 'text',
      name: 'when',
      placeholder: 'in 10 min, every day at 09:00, 0 9 * * 1',
      required: true,
      'aria-label': label,
      onInput: () => this.schedule()
    });
  }

  readonly input: HTMLInputElement;
  readonly preview = h('div', {
    class: 'jp-RecallForm-preview',
    'aria-live': 'polite',
    'aria-label': 'Schedule preview'
  });

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
      return;
    }
    try {
      const parsed = await this.api.parse(when);
      if (asked !== this._asked) {
        return;
      }
      this.preview.className = 'jp-RecallForm-preview';
      this.preview.replaceChildren(
        h('div', {}, `${parsed.description} (${parsed.tz})`),
        h(
          'ul',
          { 'aria-label': 'Next fire times' },
          ...parsed.next_fire_times.map(t => h('li', {}, new Date(t).toLocaleString()))
        )
      );
    } catch (error) {
      if (asked === this._asked) {
        this.preview.className = 'jp-RecallForm-preview jp-mod-error';
        this.preview.replaceChildren((error as Error).message);
      }
    }
  }

  private _asked = 0;
  private _timer = 0;
}
