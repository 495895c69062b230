/**
 * The words shown for the server's vocabularies: job statuses and kinds, run statuses and
 * triggers, approval statuses. One table per vocabulary, each word through trans.__ (so a
 * translation can change it); the raw value stays in the elements' data-* attributes and
 * CSS classes, which tests and styles read. A value not in a table shows as it came. Pure, so
 * it is unit-tested on its own (test/labels.test.ts).
 */
import type { TranslationBundle } from '@jupyterlab/translation';

type Labels = { [value: string]: string };

/** A job's status (JOB_STATUSES), as badges and the status filter show it. */
export function jobStatusLabels(trans: TranslationBundle): Labels {
  return {
    active: trans.__('active'),
    paused: trans.__('paused'),
    completed: trans.__('completed'),
    failed: trans.__('failed'),
    cancelled: trans.__('cancelled')
  };
}

/** A job's kind (JOB_KINDS), as its tag and the kind filter show it. */
export function jobKindLabels(trans: TranslationBundle): Labels {
  return {
    job: trans.__('job'),
    recall: trans.__('recall'),
    watcher: trans.__('watcher')
  };
}

/** A run's status, as its badge shows it. */
export function runStatusLabels(trans: TranslationBundle): Labels {
  return {
    running: trans.__('running'),
    succeeded: trans.__('succeeded'),
    failed: trans.__('failed'),
    interrupted: trans.__('interrupted'),
    skipped: trans.__('skipped'),
    missed: trans.__('missed'),
    cancelled: trans.__('cancelled'),
    timed_out: trans.__('timed out')
  };
}

/** What started a run, as the run history shows it. */
export function runTriggerLabels(trans: TranslationBundle): Labels {
  return {
    schedule: trans.__('schedule'),
    manual: trans.__('manual'),
    catchup: trans.__('catch-up'),
    after: trans.__('after')
  };
}

/** An approval request's status, as its badge shows it. */
export function approvalStatusLabels(trans: TranslationBundle): Labels {
  return {
    pending: trans.__('pending'),
    approved: trans.__('approved'),
    denied: trans.__('denied'),
    expired: trans.__('expired')
  };
}

/** The word of `value` in a table; the value itself when the table does not have it. */
export function label(labels: Labels, value: string | null | undefined): string {
  const raw = value ?? '';
  return Object.prototype.hasOwnProperty.call(labels, raw) ? labels[raw] : raw;
}
