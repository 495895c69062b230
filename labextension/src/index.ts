import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { Event } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { IToast, toastFor } from './alerts';
import { addApprovals } from './approvals';
import { RecallApi } from './api';
import { currentNotebook, isNotebook, RecallBanner } from './banner';
import { addCommands, CommandIds } from './commands';
import { JobForm } from './form';
import { recallIcon } from './icons';
import { RecallModel } from './model';
import { Resync } from './resync';
import { readSettings } from './settings';
import { RecallSidebar } from './sidebar';
import { IChangeEvent, SCHEMA_ID } from './state';
import { RecallStatus } from './statusbar';

const PLUGIN_ID = 'jupyter-recall:plugin';

function showToast(app: JupyterFrontEnd, model: RecallModel, sidebar: Widget, toast: IToast): void {
  if (!model.settings.toasts[toast.category]) {
    return;
  }
  const { jobId, runId } = toast;
  const actions =
    jobId && runId
      ? [
          {
            label: model.trans.__('Show run'),
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
 * Live updates through Lab's jupyter_events socket. Events missed while the server was out of
 * reach come back from REST: the service manager reports each lost connection, and the next
 * event or the page becoming visible again triggers one full re-sync (no polling of our own).
 */
function subscribe(app: JupyterFrontEnd, model: RecallModel, sidebar: Widget): void {
  const events = app.serviceManager.events;
  const resync = new Resync(app.serviceManager.connectionFailure, () => void model.refresh());
  document.addEventListener(
    'visibilitychange',
    () => document.visibilityState === 'visible' && resync.check()
  );
  window.addEventListener('online', () => resync.check());
  events.stream.connect((_, emission: Event.Emission) => {
    if (emission.schema_id !== SCHEMA_ID) {
      return;
    }
    resync.check();
    const event = emission as unknown as IChangeEvent;
    // Read before the event changes the state: a job deleted by it still names its toast.
    const toast = toastFor(event, model.state, model.trans);
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

/** The settings of the Settings Editor, applied now and whenever they change. */
async function followSettings(
  registry: ISettingRegistry,
  model: RecallModel,
  form: JobForm
): Promise<void> {
  try {
    const settings = await registry.load(PLUGIN_ID);
    const apply = () => {
      model.setSettings(readSettings(settings.composite as { [key: string]: unknown }));
      form.update();
    };
    settings.changed.connect(apply);
    apply();
  } catch (error) {
    console.warn('jupyter-recall: settings not loaded, defaults apply', error);
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Recall sidebar (jobs, runs, watchers, notifications), commands, settings, status bar item, live updates, toasts and the pending-recall banner.',
  autoStart: true,
  optional: [
    ILayoutRestorer,
    ITranslator,
    ISettingRegistry,
    IStatusBar,
    ICommandPalette,
    IFileBrowserFactory
  ],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    registry: ISettingRegistry | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    files: IFileBrowserFactory | null
  ) => {
    const trans = (translator ?? nullTranslator).load('jupyter_recall');
    const api = new RecallApi(app.serviceManager.serverSettings);
    const model = new RecallModel(api, trans);
    const currentPath = () => currentNotebook(app.shell)?.context.path ?? null;
    const form = new JobForm(model, currentPath);
    const sidebar = new RecallSidebar(model, form);
    sidebar.title.icon = recallIcon;
    app.shell.add(sidebar, 'left', { rank: 850 });
    restorer?.add(sidebar, sidebar.id);
    addCommands(app, { model, sidebar, form }, palette, files);
    statusBar?.registerStatusItem(PLUGIN_ID, {
      item: new RecallStatus(model, () => void app.commands.execute(CommandIds.showJobs)),
      align: 'left',
      rank: 4
    });
    subscribe(app, model, sidebar);
    addApprovals(app, api, trans, palette, statusBar);
    void app.restored.then(() => {
      trackNotebooks(app, model, form);
      void model.refresh();
    });
    if (registry) {
      void followSettings(registry, model, form);
    }
  }
};

export default plugin;
