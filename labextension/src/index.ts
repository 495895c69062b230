import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { Event } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { IToast, toastFor } from './alerts';
import { RecallApi } from './api';
import { isNotebook, RecallBanner } from './banner';
import { JobForm } from './form';
import { recallIcon } from './icons';
import { RecallModel } from './model';
import { RecallSidebar } from './sidebar';
import { IChangeEvent, SCHEMA_ID } from './state';

/** Where the poll of Lab's event socket reports a lost connection (not public API). */
interface IEventPoll {
  _poll?: { ticked?: { connect(slot: (sender: unknown, state: { phase: string }) => void): void } };
}

function showToast(app: JupyterFrontEnd, model: RecallModel, sidebar: Widget, toast: IToast): void {
  const { jobId, runId } = toast;
  const actions =
    jobId && runId
      ? [
          {
            label: 'Show run',
            callback: () => {
              app.shell.activateById(sidebar.id);
              void model.select(jobId, runId);
            }
          }
        ]
      : [];
  Notification.emit(toast.message, toast.type, { autoClose: 15000, actions });
}

/**
 * Live updates through Lab's jupyter_events socket. Events missed while it was down come back
 * from REST: the socket's poll reports each loss, and the next event or the page becoming
 * visible again triggers one full re-sync (no polling loop of our own).
 */
function subscribe(app: JupyterFrontEnd, model: RecallModel, sidebar: Widget): void {
  const events = app.serviceManager.events;
  let stale = false;
  const resync = () => {
    if (stale) {
      stale = false;
      void model.refresh();
    }
  };
  (events as unknown as IEventPoll)._poll?.ticked?.connect((_, state) => {
    if (state.phase === 'rejected') {
      stale = true;
    }
  });
  document.addEventListener(
    'visibilitychange',
    () => document.visibilityState === 'visible' && resync()
  );
  window.addEventListener('online', resync);
  events.stream.connect((_, emission: Event.Emission) => {
    if (emission.schema_id !== SCHEMA_ID) {
      return;
    }
    resync();
    const event = emission as unknown as IChangeEvent;
    // Read before the event changes the state: a job deleted by it still names its toast.
    const toast = toastFor(event, model.state);
    model.apply(event);
    if (toast) {
      showToast(app, model, sidebar, toast);
    }
  });
}

function trackNotebooks(app: JupyterFrontEnd, model: RecallModel, form: JobForm): void {
  const banners = new WeakSet<Widget>();
  const onCurrent = () => {
    const widget = app.shell.currentWidget;
    form.update();
    if (!isNotebook(widget)) {
      return;
    }
    if (!banners.has(widget)) {
      banners.add(widget);
      const banner = new RecallBanner(model, widget);
      widget.contentHeader.addWidget(banner);
      widget.disposed.connect(() => banner.dispose());
    }
    void model.loadRecalls(widget.context.path);
  };
  app.shell.currentChanged?.connect(onCurrent);
  onCurrent();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-recall:plugin',
  description:
    'Recall sidebar (jobs, runs, watchers, notifications), live updates, toasts and the pending-recall banner.',
  autoStart: true,
  optional: [ILayoutRestorer],
  activate: (app: JupyterFrontEnd, restorer: ILayoutRestorer | null) => {
    const model = new RecallModel(new RecallApi(app.serviceManager.serverSettings));
    const currentPath = () => {
      const widget = app.shell.currentWidget;
      return isNotebook(widget) ? widget.context.path : null;
    };
    const form = new JobForm(model, currentPath);
    const sidebar = new RecallSidebar(model, form);
    sidebar.title.icon = recallIcon;
    app.shell.add(sidebar, 'left', { rank: 850 });
    restorer?.add(sidebar, sidebar.id);
    subscribe(app, model, sidebar);
    void app.restored.then(() => {
      trackNotebooks(app, model, form);
      void model.refresh();
    });
  }
};

export default plugin;
