import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { actionLabel, allows } from './actions';
import { confirmCancel } from './confirm';
import { h } from './dom';
import { RecallModel } from './model';
import { pendingRecall } from './state';
import { ITickSubscription, ticker } from './time';

/**
 * What the extension reads of a notebook panel (a MainAreaWidget of a notebook document): its
 * path, its content header for the banner, and the active cell's source for "Schedule this
 * cell…". That little needs no @jupyterlab/notebook, so the extension does not depend on it.
 */
export interface INotebookLike extends Widget {
  context: { path: string };
  contentHeader: { addWidget(widget: Widget): void };
  content?: { activeCell?: ICellLike | null; widgets?: readonly ICellLike[] };
}

/** What "Schedule this cell…" reads of a cell: its node and its source. */
export interface ICellLike {
  node: HTMLElement;
  model: { sharedModel: { getSource(): string } };
}

export function isNotebook(widget: Widget | null): widget is INotebookLike {
  const candidate = widget as Partial<INotebookLike> | null;
  return (
    !!candidate &&
    typeof candidate.context?.path === 'string' &&
    candidate.context.path.endsWith('.ipynb') &&
    !!candidate.contentHeader
  );
}

/** The shell's current widget when it is a notebook. */
export function currentNotebook(shell: { currentWidget: Widget | null }): INotebookLike | null {
  const widget = shell.currentWidget;
  return isNotebook(widget) ? widget : null;
}

/**
 * A cell of the current notebook, its source and its notebook's path: the cell whose node is
 * given (the one right-clicked), else the active cell.
 */
export function currentCell(
  shell: { currentWidget: Widget | null },
  node?: HTMLElement | null
): { source: string; path: string } | null {
  const notebook = currentNotebook(shell);
  const content = notebook?.content;
  const clicked = node ? content?.widgets?.find(cell => cell.node === node) : undefined;
  const cell = clicked ?? content?.activeCell;
  return notebook && cell
    ? { source: cell.model.sharedModel.getSource(), path: notebook.context.path }
    : null;
}

/** The banner over a notebook with a pending recall: when it fires, Cancel and Skip. */
export class RecallBanner extends Widget {
  constructor(
    readonly model: RecallModel,
    readonly notebook: INotebookLike
  ) {
    super();
    this.addClass('jp-RecallBanner');
    this.node.setAttribute('role', 'status');
    // Focusable by script (not in the tab order): the focus lands here after an action.
    this.node.setAttribute('tabindex', '-1');
    this.node.setAttribute('aria-label', model.trans.__('Pending recall'));
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.changed.disconnect(this._render, this);
    this._stopTicking();
    super.dispose();
  }

  /** "in 5 min" must move on without an event, as the sidebar's times do: the shared ticker. */
  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._stopTicking();
    this._tick = ticker.subscribe(() => this._render());
  }

  protected onBeforeDetach(msg: Message): void {
    super.onBeforeDetach(msg);
    this._stopTicking();
  }

  private _stopTicking(): void {
    this._tick?.dispose();
    this._tick = null;
  }

  private _tick: ITickSubscription | null = null;

  /**
   * The banner is a status: what it says is announced when it changes. Its content is built
   * again only when the recall or its actions change; the tick updates the time alone, in a
   * part that is not live (aria-live off), so "in 5 min" becoming "in 4 min" is not read out.
   */
  private _render(): void {
    const job = pendingRecall(this.model.state, this.notebook.context.path);
    const active = document.activeElement;
    const focused = active instanceof HTMLElement && this.node.contains(active) ? active : null;
    this.setHidden(!job);
    if (!job) {
      this._shown = '';
      this.node.replaceChildren();
      if (focused) {
        this.notebook.activate(); // the banner went under the focus: the notebook takes it
      }
      return;
    }
    const { trans } = this.model;
    const actions = (['skip', 'cancel'] as const).filter(action => allows(job, action));
    const shown = JSON.stringify([job.id, job.name, actions]);
    if (shown !== this._shown) {
      this._shown = shown;
      const button = (action: 'skip' | 'cancel') => {
        const label = actionLabel(action, trans);
        return h(
          'button',
          {
            class: `jp-RecallBanner-${action}`,
            'data-action': action,
            // Named with the recall, as the sidebar's buttons are.
            'aria-label': trans.__('%1 %2', label, job.name),
            onClick: () =>
              void (
                action === 'cancel' ? confirmCancel(this.model, job) : this.model.act(job, action)
              ).then(() => this._focusAfter(action))
          },
          label
        );
      };
      this.node.replaceChildren(
        h(
          'span',
          { class: 'jp-RecallBanner-text' },
          trans.__('Recall pending: %1', job.name),
          ' ',
          this._when
        ),
        ...actions.map(button)
      );
    }
    if (focused && !this.node.contains(document.activeElement)) {
      this._focusAfter(focused.getAttribute('data-action') ?? '');
    }
    this._when.textContent = this.model.time(job.next_fire_at, new Date()) || trans.__('soon');
    this._when.title = this.model.fullTime(job.next_fire_at);
  }

  /**
   * After an action (its dialog took the focus) or a rebuild under the focus: the focus goes
   * back to the button of `action`, else to the banner, or to the notebook once the banner has
   * gone, not to the page.
   */
  private _focusAfter(action: string): void {
    if (this.isHidden || !this.node.isConnected) {
      this.notebook.activate();
      return;
    }
    const button = Array.from(this.node.querySelectorAll<HTMLElement>('[data-action]')).find(
      element => element.getAttribute('data-action') === action
    );
    (button ?? this.node).focus({ preventScroll: true });
  }

  /** The fire time, updated in place at each tick; not announced (aria-live off). */
  private _when = h('span', { class: 'jp-RecallBanner-when', 'aria-live': 'off' });
  /** The recall and actions the banner's content was built for. */
  private _shown = '';
}
