import { Dialog, showDialog } from '@jupyterlab/apputils';

import { RecallModel } from './model';
import { IJob } from './state';

/**
 * Cancelling ends a job for good (it then hides with the finished ones), so it asks first:
 * the sidebar's Cancel and the notebook banner's share this dialog. Keep job is the default
 * button, so Enter (or a stray key) keeps the job.
 */
export async function confirmCancel(model: RecallModel, job: IJob): Promise<boolean> {
  const { trans } = model;
  const body = trans.__(
    'Cancel %1? It never fires again, and finished jobs are hidden from the list.',
    job.name
  );
  if (!(await askKeepingJob(model, trans.__('Cancel job'), body))) {
    return false;
  }
  await model.act(job, 'cancel');
  return true;
}

/**
 * Deleting a finished job removes it and its run history for good, so it asks as Cancel
 * does: Keep job is the default button. Resolves true when the job was deleted.
 */
export async function confirmDelete(model: RecallModel, job: IJob): Promise<boolean> {
  const { trans } = model;
  const body = trans.__('Delete %1 and its run history? This cannot be undone.', job.name);
  if (!(await askKeepingJob(model, trans.__('Delete job'), body))) {
    return false;
  }
  return model.removeJob(job);
}

/** Whether the user chose `action` (the dialog's title and its warning button) over Keep job. */
async function askKeepingJob(model: RecallModel, action: string, body: string): Promise<boolean> {
  const answer = await showDialog({
    title: action,
    body,
    buttons: [
      Dialog.cancelButton({ label: model.trans.__('Keep job') }),
      Dialog.warnButton({ label: action })
    ],
    defaultButton: 0
  });
  return answer.button.accept;
}
