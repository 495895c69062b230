import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { Event } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { RecallApi } from './api';
import { isNotebook, RecallBanner } from './banner';
import { JobForm } from './form';
import { RecallModel } from './model';
import { RecallSidebar } from './sidebar';
import { IChangeEvent, isFailedRun, SCHEMA_ID } from './state';

const clockSvg =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24"><path class="jp-icon3" fill="#616161" d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16zm.5-13H11v6l5.2 3.2.8-1.3-4.5-2.7V7z"/></svg>';

export const recallIcon = new LabIcon({ name: 'jupyter-recall:clock', svgstr: clockSvg });

/** Where the poll of Lab's event socket reports a lost connection (not public API). */
interface IEventPoll {
  _poll?: { ticked?: { connect(slot: (sender: unknown, state: { phase: string }) => void): void } };
}

function notifyFailure(
  app: JupyterFrontEnd,
  model: RecallModel,
  sidebar: Widget,
  event: IChangeEvent
): void {
  const run = event.run!;
  const job = event.job ?? model.state.jobs[run.job_id];
  const name = job?.name ?? run.job_id;
  Notification.error(`Recall job "${name}" failed${run.error ? `: ${run.error}` : ''}`, {
    autoClose: 15000,
    actions: [
      {
        label: 'Show run',
        callback: () => {
          app.shell.activateById(sidebar.id);
          void model.select(run.job_id, run.id);
        }
      }
    ]
  });
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
    model.apply(event);
    if (isFailedRun(event)) {
      notifyFailure(app, model, sidebar, event);
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
  description: 'Recall sidebar, live job updates, failure toasts and the pending-recall banner.',
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
