/**
 * The extension's settings (schema/plugin.json, shown in the Settings Editor) read into one
 * typed record: a missing or mistyped value falls back to its default, so a hand-edited
 * settings file cannot break the views. Pure, so it is unit-tested on its own.
 */
import type { ToastCategory } from './alerts';
import { TIME_MODES, TimeMode } from './time';

export type JobTarget = 'kernel' | 'headless';

export interface IRecallSettings {
  /** How times are shown: relative with the date and time, the date and time, or relative. */
  timeFormat: TimeMode;
  /** Which toasts appear. */
  toasts: { [category in ToastCategory]: boolean };
  /** Where a new job from the form runs when a notebook is open. */
  defaultTarget: JobTarget;
  /** Whether completed, failed and cancelled jobs are left out of the job list. */
  hideFinished: boolean;
}

export const DEFAULT_SETTINGS: IRecallSettings = {
  timeFormat: 'relative-absolute',
  toasts: { failedRuns: true, watcherAlerts: true, backgroundTasks: true, uiNotifications: true },
  defaultTarget: 'kernel',
  hideFinished: true
};

function oneOf<T extends string>(value: unknown, accepted: readonly T[], fallback: T): T {
  return accepted.includes(value as T) ? (value as T) : fallback;
}

function flag(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

/** The settings from the registry's composite values (`settings.composite`). */
export function readSettings(
  composite: { [key: string]: unknown } | null | undefined
): IRecallSettings {
  const raw = composite ?? {};
  const toasts = (raw.toasts ?? {}) as { [key: string]: unknown };
  const defaults = DEFAULT_SETTINGS.toasts;
  return {
    timeFormat: oneOf(raw.timeFormat, TIME_MODES, DEFAULT_SETTINGS.timeFormat),
    toasts: {
      failedRuns: flag(toasts.failedRuns, defaults.failedRuns),
      watcherAlerts: flag(toasts.watcherAlerts, defaults.watcherAlerts),
      backgroundTasks: flag(toasts.backgroundTasks, defaults.backgroundTasks),
      uiNotifications: flag(toasts.uiNotifications, defaults.uiNotifications)
    },
    defaultTarget: oneOf(raw.defaultTarget, ['kernel', 'headless'] as const, 'kernel'),
    hideFinished: flag(raw.hideFinished, DEFAULT_SETTINGS.hideFinished)
  };
}
