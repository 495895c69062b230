/**
 * Which change events become a toast, and what it says: pure, so it is unit-tested on its own
 * (test/alerts.test.ts); index.ts shows them with JupyterLab's Notification.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { IChangeEvent, INotification, IState } from './state';

export type ToastType = 'error' | 'warning' | 'info' | 'success';

/** What a toast is about: each can be turned off in the settings (`toasts`). */
export type ToastCategory = 'failedRuns' | 'watcherAlerts' | 'backgroundTasks' | 'uiNotifications';

export interface IToast {
  type: ToastType;
  category: ToastCategory;
  message: string;
  /** The run the toast's "Show run" opens (with its job), when there is one. */
  jobId?: string;
  runId?: string;
}

const URGENT = new Set(['high', 'critical']);

function firstLine(text: string): string {
  return text.trim().split('\n', 1)[0];
}

function heading(notification: INotification): string {
  return notification.title || firstLine(notification.message);
}

/** A watcher speaks through notifications; an error or urgent one warns. */
function watcherToast(notification: INotification): IToast {
  const source = notification.source ?? {};
  const urgent = URGENT.has(notification.priority ?? '') || !!notification.tags?.includes('error');
  return {
    type: urgent ? 'warning' : 'info',
    category: 'watcherAlerts',
    message: heading(notification),
    jobId: source.job_id,
    runId: source.run_id
  };
}

/** A kernel's background task that ended (sent to the `ui` channel by the kernel). */
function backgroundToast(notification: INotification, trans: TranslationBundle): IToast {
  const status = String(notification.structured_data?.status ?? '');
  const type: ToastType =
    status === 'succeeded' ? 'success' : status === 'cancelled' ? 'info' : 'error';
  const message = notification.session
    ? trans.__('%1 (%2)', heading(notification), notification.session)
    : heading(notification);
  return { type, category: 'backgroundTasks', message };
}

/** Run statuses that are the job's failure: each gets an error toast. */
const FAILED_RUNS: ReadonlySet<string> = new Set(['failed', 'timed_out']);

function notificationToast(notification: INotification, trans: TranslationBundle): IToast | null {
  if (notification.source?.kind === 'watcher') {
    return watcherToast(notification);
  }
  if (notification.tags?.includes('background')) {
    return backgroundToast(notification, trans);
  }
  // The rest is for the notebook's kernel, unless it was meant for the user's UI; a job's
  // failed outcome already has the failed run's toast.
  const failedOutcome =
    notification.source?.kind === 'job' &&
    FAILED_RUNS.has(String(notification.structured_data?.status));
  if (notification.delivered_to !== 'ui' || failedOutcome) {
    return null;
  }
  const source = notification.source ?? {};
  return {
    type: URGENT.has(notification.priority ?? '') ? 'warning' : 'info',
    category: 'uiNotifications',
    message: heading(notification),
    jobId: source.job_id,
    runId: source.run_id
  };
}

/**
 * The toast for a change event, or null: a failed run, a watcher's notification, a finished
 * background task, and any notification for the user's UI.
 */
export function toastFor(
  event: IChangeEvent,
  state: IState,
  trans: TranslationBundle
): IToast | null {
  const run = event.type === 'run.finished' ? event.run : undefined;
  if (run && FAILED_RUNS.has(run.status)) {
    const job = event.job ?? state.jobs[run.job_id];
    // A failed check of a watcher speaks through its notification, by its strategy.
    if (job?.kind === 'watcher') {
      return null;
    }
    const name = job?.name ?? run.job_id;
    if (run.retry_at) {
      // Not the occurrence's outcome yet: its next attempt is planned.
      return {
        type: 'warning',
        category: 'failedRuns',
        message: trans.__(
          'Recall job "%1" %2 (attempt %3), retrying: %4',
          name,
          run.status,
          run.attempt ?? 1,
          run.error ?? ''
        ),
        jobId: run.job_id,
        runId: run.id
      };
    }
    return {
      type: 'error',
      category: 'failedRuns',
      message: run.error
        ? trans.__('Recall job "%1" failed: %2', name, run.error)
        : trans.__('Recall job "%1" failed', name),
      jobId: run.job_id,
      runId: run.id
    };
  }
  if (event.type === 'notification' && event.notification) {
    return notificationToast(event.notification, trans);
  }
  return null;
}
