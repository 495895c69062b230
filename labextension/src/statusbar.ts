import { Widget } from '@lumino/widgets';

import { h } from './dom';
import { RecallModel } from './model';

/**
 * The status bar item: how many jobs have a run going and how many wait for their next fire;
 * a click opens the Recall sidebar.
 */
export class RecallStatus extends Widget {
  constructor(
    readonly model: RecallModel,
    readonly open: () => void
  ) {
    super({ node: h('button', { type: 'button', class: 'jp-RecallStatus' }) });
    this.node.addEventListener('click', () => this.open());
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    this.model.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const { trans } = this.model;
    // The server's counts cover every job, not only the page loaded.
    const { running, pending } = this.model.counts;
    const text = trans.__('Recall: %1 running, %2 pending', running, pending);
    this.node.textContent = text;
    this.node.dataset.running = String(running);
    this.node.dataset.pending = String(pending);
    this.node.title = trans.__('%1. Open the Recall sidebar', text);
  }
}
