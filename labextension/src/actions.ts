/**
 * Which actions a job allows, from one place: the server's `allowed_actions` (computed once in
 * the Python core) when the job JSON has it, else the one fallback rule below. Pure, so it is
 * unit-tested on its own (test/actions.test.ts).
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { IJob } from './state';

/** The action names of `allowed_actions`, in the order buttons show them. */
export const JOB_ACTIONS = ['run_now', 'skip', 'pause', 'resume', 'cancel', 'edit'] as const;

export type JobAction = (typeof JOB_ACTIONS)[number];

/** The REST route of each action (`POST /api/recall/jobs/{id}/<route>`); edit is a PATCH. */
export const ACTION_ROUTES: { [action: string]: string } = {
  run_now: 'trigger',
  skip: 'skip',
  pause: 'pause',
  resume: 'resume',
  cancel: 'cancel'
};

/**
 * The fallback for a server that does not send `allowed_actions`: an active job can be run,
 * paused, cancelled, edited (and skipped when it recurs), a paused one resumed; a finished job
 * offers nothing, as the server refuses to fire it.
 */
function fallbackActions(job: IJob): JobAction[] {
  switch (job.status) {
    case 'active':
      return job.schedule_kind === 'once'
        ? ['run_now', 'pause', 'cancel', 'edit']
        : ['run_now', 'skip', 'pause', 'cancel', 'edit'];
    case 'paused':
      return ['run_now', 'resume', 'cancel', 'edit'];
    default:
      return [];
  }
}

/** The actions a job allows, in button order. */
export function allowedActions(job: IJob): JobAction[] {
  const known = job.allowed_actions;
  if (!Array.isArray(known)) {
    return fallbackActions(job);
  }
  return JOB_ACTIONS.filter(action => known.includes(action));
}

export function allows(job: IJob, action: JobAction): boolean {
  return allowedActions(job).includes(action);
}

/** The actions shown as buttons on a job's row (edit opens the editor of the details). */
export function buttonActions(job: IJob): JobAction[] {
  return allowedActions(job).filter(action => action !== 'edit');
}

export function actionLabel(action: string, trans: TranslationBundle): string {
  switch (action) {
    case 'run_now':
      return trans.__('Run now');
    case 'skip':
      return trans.__('Skip');
    case 'pause':
      return trans.__('Pause');
    case 'resume':
      return trans.__('Resume');
    case 'cancel':
      return trans.__('Cancel');
    case 'edit':
      return trans.__('Edit schedule');
    default:
      return action;
  }
}
