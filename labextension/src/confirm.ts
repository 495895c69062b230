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
  const answer = await showDialog({
    title: trans.__('Cancel job'),
    body: trans.__(
      'Cancel %1? It never fires again, and finished jobs are hidden from the list.',
      job.name
    ),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Keep job') }),
      Dialog.warnButton({ label: trans.__('Cancel job') })
    ],
    defaultButton: 0
  });
  if (!answer.button.accept) {
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
  const answer = await showDialog({
    title: trans.__('Delete job'),
    body: trans.__('Delete %1 and its run history? This cannot be undone.', job.name),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Keep job') }),
      Dialog.warnButton({ label: trans.__('Delete job') })
    ],
    defaultButton: 0
  });
  if (!answer.button.accept) {
    return false;
  }
  return model.removeJob(job);
}
