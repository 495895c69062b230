import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { runIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { allows } from './actions';
import { currentCell, currentNotebook } from './banner';
import { whenChanged } from './changes';
import { JobForm } from './form';
import { recallIcon } from './icons';
import { RecallModel } from './model';

/** The extension's command ids (menus, toolbar and shortcut refer to them in schema/plugin.json). */
export const CommandIds = {
  showJobs: 'jupyter-recall:show-jobs',
  runJobNow: 'jupyter-recall:run-job-now',
  scheduleNotebook: 'jupyter-recall:schedule-notebook',
  scheduleFile: 'jupyter-recall:schedule-file',
  scheduleCell: 'jupyter-recall:schedule-cell'
} as const;

const PALETTE_CATEGORY = 'Recall';

export interface IRecallViews {
  model: RecallModel;
  sidebar: Widget;
  form: JobForm;
}

/** The notebook selected in the file browser (its context menu's target). */
function selectedNotebook(files: IFileBrowserFactory | null): string | null {
  const item = files?.tracker.currentWidget?.selectedItems().next();
  const model = item && !item.done ? item.value : null;
  return model && model.type === 'notebook' ? model.path : null;
}

function addScheduleCommands(
  app: JupyterFrontEnd,
  views: IRecallViews,
  files: IFileBrowserFactory | null
): void {
  const { commands, shell } = app;
  const { model, sidebar, form } = views;
  const { trans } = model;
  const scheduleNotebook = (path: string | null) => {
    if (path) {
      shell.activateById(sidebar.id);
      form.scheduleNotebook(path);
    }
  };
  commands.addCommand(CommandIds.scheduleNotebook, {
    label: trans.__('Schedule this notebook…'),
    caption: trans.__('Schedule a run of this notebook in a fresh kernel'),
    icon: recallIcon,
    isEnabled: () => currentNotebook(shell) !== null,
    execute: () => scheduleNotebook(currentNotebook(shell)?.context.path ?? null)
  });
  commands.addCommand(CommandIds.scheduleFile, {
    label: trans.__('Schedule this notebook…'),
    caption: trans.__('Schedule a run of the selected notebook in a fresh kernel'),
    icon: recallIcon,
    isVisible: () => selectedNotebook(files) !== null,
    execute: () => scheduleNotebook(selectedNotebook(files))
  });
  // From the cell's context menu (args.origin, set in schema/plugin.json) the cell is the one
  // right-clicked, which JupyterLab does not make active; from the Run menu, the active cell.
  const cellOf = (args: { origin?: unknown }) =>
    currentCell(
      shell,
      args.origin === 'context-menu'
        ? app.contextMenuHitTest(node => node.classList.contains('jp-Cell'))
        : null
    );
  commands.addCommand(CommandIds.scheduleCell, {
    label: trans.__('Schedule this cell…'),
    caption: trans.__("Schedule this cell's code in this notebook's kernel"),
    icon: recallIcon,
    isEnabled: args => cellOf(args) !== null,
    execute: args => {
      const cell = cellOf(args);
      if (cell) {
        shell.activateById(sidebar.id);
        form.scheduleCode(cell.source, cell.path);
      }
    }
  });
}

function selectedJob(model: RecallModel) {
  const id = model.selectedJob;
  return id ? model.state.jobs[id] : undefined;
}

/**
 * The commands of the palette, menus, toolbar and shortcut: show the jobs, run the selected
 * job now, schedule a notebook (current one, or the file browser's selection) or a cell.
 */
export function addCommands(
  app: JupyterFrontEnd,
  views: IRecallViews,
  palette: ICommandPalette | null,
  files: IFileBrowserFactory | null
): void {
  const { commands, shell } = app;
  const { model, sidebar } = views;
  const { trans } = model;
  commands.addCommand(CommandIds.showJobs, {
    label: trans.__('Show scheduled jobs'),
    caption: trans.__('Open the Recall sidebar'),
    icon: recallIcon,
    execute: () => shell.activateById(sidebar.id)
  });
  commands.addCommand(CommandIds.runJobNow, {
    label: () => {
      const job = selectedJob(model);
      return job ? trans.__('Run job now: %1', job.name) : trans.__('Run job now');
    },
    caption: trans.__('Run the job selected in the Recall sidebar now'),
    icon: runIcon,
    isEnabled: () => {
      const job = selectedJob(model);
      return !!job && allows(job, 'run_now');
    },
    execute: async () => {
      const job = selectedJob(model);
      if (job && allows(job, 'run_now')) {
        await model.act(job, 'run_now');
      }
    }
  });
  // Menus and palette show whether "Run job now" applies, and to which job, as the selection
  // changes: told only when that changes, not at every change of the model.
  const runNowState = (): string => {
    const job = selectedJob(model);
    return job ? `${job.id}\n${job.name}\n${allows(job, 'run_now')}` : '';
  };
  const updateRunNow = whenChanged(runNowState, () =>
    commands.notifyCommandChanged(CommandIds.runJobNow)
  );
  model.changed.connect(() => updateRunNow());
  addScheduleCommands(app, views, files);
  for (const command of [
    CommandIds.showJobs,
    CommandIds.runJobNow,
    CommandIds.scheduleNotebook,
    CommandIds.scheduleCell
  ]) {
    palette?.addItem({ command, category: trans.__(PALETTE_CATEGORY) });
  }
}
