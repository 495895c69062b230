import { Widget } from '@lumino/widgets';

import { h } from './dom';
import { RecallModel } from './model';
import { formatRelative, pendingRecall } from './state';

/** What the banner needs of a notebook panel (a MainAreaWidget of a notebook document). */
export interface INotebookLike extends Widget {
  context: { path: string };
  contentHeader: { addWidget(widget: Widget): void };
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

/** The banner over a notebook with a pending recall: when it fires, Cancel and Skip. */
export class RecallBanner extends Widget {
  constructor(
    readonly model: RecallModel,
    readonly notebook: INotebookLike
  ) {
    super();
    this.addClass('jp-RecallBanner');
    this.node.setAttribute('role', 'status');
    this.node.setAttribute('aria-label', 'Pending recall');
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    this.model.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const job = pendingRecall(this.model.state, this.notebook.context.path);
    this.setHidden(!job);
    if (!job) {
      this.node.replaceChildren();
      return;
    }
    const at = job.next_fire_at ? new Date(job.next_fire_at) : null;
    const when = at
      ? `${at.toLocaleString()} (${formatRelative(job.next_fire_at, new Date())})`
      : 'soon';
    const button = (action: string, label: string) =>
      h(
        'button',
        {
          class: `jp-RecallBanner-${action}`,
          'data-action': action,
          onClick: () => void this.model.act(job, action)
        },
        label
      );
    this.node.replaceChildren(
      h('span', { class: 'jp-RecallBanner-text' }, `Recall pending: ${job.name} at ${when}`),
      ...(job.schedule_kind === 'once' ? [] : [button('skip', 'Skip')]),
      button('cancel', 'Cancel')
    );
  }
}
