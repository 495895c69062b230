/**
 * The one way times are shown on every surface (sidebar, job details, banner, panels, schedule
 * preview): in the user's locale and time zone through Intl, with a relative hint ("in 29 min",
 * "3 hr. ago"). Pure, so it is unit-tested on its own (test/time.test.ts); so is the one
 * `ticker` that redraws those relative hints (test/ticker.test.ts).
 */

/** How often a surface showing relative times ("in 5 min") redraws them when no event comes. */
export const TICK_MS = 30_000;

/** A subscription to a `Ticker`: Lumino's `IDisposable`, whose `dispose` stops the calls. */
export interface ITickSubscription {
  readonly isDisposed: boolean;
  dispose(): void;
}

/**
 * One interval shared by every surface showing relative times: it starts when the first
 * subscriber arrives and is cleared when the last one leaves, so a page with a sidebar and
 * several notebook banners keeps one timer, and a page showing none keeps no timer at all.
 */
export class Ticker {
  constructor(readonly interval: number = TICK_MS) {}

  /** How many subscriptions are live. */
  get subscribers(): number {
    return this._callbacks.size;
  }

  /** Whether the interval is running (exactly when someone is subscribed). */
  get isRunning(): boolean {
    return this._timer !== null;
  }

  /** Calls `callback` every `interval` ms until the returned subscription is disposed. */
  subscribe(callback: () => void): ITickSubscription {
    // A fresh object per subscription: the same callback may subscribe twice.
    const entry = { callback };
    this._callbacks.add(entry);
    if (this._timer === null) {
      this._timer = setInterval(() => this._tick(), this.interval);
    }
    let disposed = false;
    return {
      get isDisposed() {
        return disposed;
      },
      dispose: () => {
        if (disposed) {
          return;
        }
        disposed = true;
        this._callbacks.delete(entry);
        if (this._callbacks.size === 0 && this._timer !== null) {
          clearInterval(this._timer);
          this._timer = null;
        }
      }
    };
  }

  private _tick(): void {
    // A copy, and a second look: a callback may dispose another subscription (or its own).
    for (const entry of [...this._callbacks]) {
      if (!this._callbacks.has(entry)) {
        continue;
      }
      try {
        entry.callback();
      } catch (error) {
        // One failing surface must not stop the others' clocks.
        console.error(error);
      }
    }
  }

  private _callbacks = new Set<{ callback: () => void }>();
  private _timer: ReturnType<typeof setInterval> | null = null;
}

/** The page's ticker: the sidebar and every notebook banner subscribe to it. */
export const ticker = new Ticker();

/** The browser's time zone (an IANA name, e.g. "Europe/Paris"): the zone of what the user types. */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** How times are shown (the `timeFormat` setting). */
export type TimeMode = 'relative-absolute' | 'absolute' | 'relative';

export const TIME_MODES: readonly TimeMode[] = ['relative-absolute', 'absolute', 'relative'];

/** The locale and zone to show times in; unset, the browser's own. */
export interface ITimeZoneOptions {
  locale?: string;
  timeZone?: string;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1]
];

/** An instant as a date and time of the user's locale and zone, e.g. "24 Nov 2026, 17:34". */
export function formatAbsolute(iso: string, options: ITimeZoneOptions = {}): string {
  return new Intl.DateTimeFormat(options.locale, {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: options.timeZone
  }).format(new Date(iso));
}

/** The same with seconds and the zone's name: the full reading behind a hover. */
export function formatFull(iso: string, options: ITimeZoneOptions = {}): string {
  return new Intl.DateTimeFormat(options.locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
    timeZone: options.timeZone
  }).format(new Date(iso));
}

/** An instant relative to `now` in the user's language: "in 29 min.", "3 hr. ago". */
export function formatRelative(iso: string, now: Date, options: ITimeZoneOptions = {}): string {
  const seconds = Math.round((Date.parse(iso) - now.getTime()) / 1000);
  const [unit, size] = UNITS.find(([, size]) => Math.abs(seconds) >= size) ?? UNITS[3];
  const format = new Intl.RelativeTimeFormat(options.locale, { numeric: 'always', style: 'short' });
  return format.format(Math.round(seconds / size), unit);
}

/** An instant as the `timeFormat` setting asks; '' for none. */
export function formatTime(
  iso: string | null | undefined,
  now: Date,
  mode: TimeMode,
  options: ITimeZoneOptions = {}
): string {
  if (!iso || Number.isNaN(Date.parse(iso))) {
    return '';
  }
  switch (mode) {
    case 'absolute':
      return formatAbsolute(iso, options);
    case 'relative':
      return formatRelative(iso, now, options);
    default:
      return `${formatRelative(iso, now, options)} (${formatAbsolute(iso, options)})`;
  }
}
