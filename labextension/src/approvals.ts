import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { Event } from '@jupyterlab/services';
import { IStatusBar } from '@jupyterlab/statusbar';
import { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { RecallApi } from './api';
import { Arrivals } from './arrivals';
import {
  applyApproval,
  approvalOf,
  Decision,
  IApproval,
  pendingApprovals,
  withArrivals
} from './approvalRecords';
import { h, replaceKeepingFocus } from './dom';
import { recallIcon } from './icons';
import { approvalStatusLabels, label } from './labels';
import { SCHEMA_ID } from './state';
import { formatFull, formatTime } from './time';

export const ShowApprovals = 'jupyter-recall:show-approvals';

/** The approvals inbox as the page knows it: loaded over REST, kept live by events. */
export class ApprovalsModel {
  constructor(
    readonly api: RecallApi,
    readonly trans: TranslationBundle
  ) {}

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get records(): IApproval[] {
    return this._records;
  }

  get pending(): IApproval[] {
    return pendingApprovals(this._records);
  }

  error = '';

  async refresh(): Promise<void> {
    try {
      const { answer, arrived } = await this._arrivals.during(() =>
        this.api.request<{ approvals: IApproval[] }>('GET', 'approvals')
      );
      this._records = withArrivals(answer.approvals, arrived);
      this.error = '';
    } catch (error) {
      this.error = String((error as Error).message ?? error);
    }
    this._changed.emit();
  }

  apply(record: IApproval): void {
    this._arrivals.record(record);
    this._records = applyApproval(this._records, record);
    this._changed.emit();
  }

  /** Decides a request, with the user's note if any; a success clears an earlier error. */
  async decide(id: string, decision: Decision, note = ''): Promise<void> {
    const body = note.trim() ? { decision, note: note.trim() } : { decision };
    try {
      const decided = await this.api.request<IApproval>('POST', `approvals/${id}`, body);
      this.error = '';
      this.apply(decided);
    } catch (error) {
      // Decided elsewhere first (409) or gone: show what the server has now.
      this.error = String((error as Error).message ?? error);
      await this.refresh();
      this.error = String((error as Error).message ?? error);
      this._changed.emit();
    }
  }

  private _records: IApproval[] = [];
  private _arrivals = new Arrivals<IApproval>();
  private _changed = new Signal<this, void>(this);
}

/** The Approvals panel: waiting calls with Approve / Deny, then the latest decisions. */
export class ApprovalsPanel extends Widget {
  constructor(readonly model: ApprovalsModel) {
    super();
    const { trans } = model;
    this.id = 'jupyter-recall-approvals';
    this.addClass('jp-RecallApprovals');
    this.title.caption = trans.__('Recall: approvals');
    this.title.label = trans.__('Approvals');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Recall approvals'));
    this.node.append(this._heading, this._error, this._list);
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    this.model.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const { trans } = this.model;
    const records = this.model.records.slice(0, RECENT);
    this._error.textContent = this.model.error;
    replaceKeepingFocus(
      this._list,
      'data-approval-id',
      records.length
        ? records.map(record => this._item(record))
        : [h('li', { class: 'jp-RecallSidebar-empty' }, trans.__('No approvals'))],
      index => this._nextWaiting(index)
    );
    // The note being typed keeps its caret at the end across a redraw.
    const active = document.activeElement;
    if (active instanceof HTMLInputElement && this._list.contains(active)) {
      active.setSelectionRange(active.value.length, active.value.length);
    }
  }

  /**
   * Where the focus goes when the request it was on is decided (its buttons gone): the next
   * request still waiting (its Approve), else the one before, else the panel's heading.
   */
  private _nextWaiting(index: number): HTMLElement {
    const buttons = Array.from(this._list.querySelectorAll<HTMLElement>('[data-approval-id]')).map(
      item => item.querySelector<HTMLElement>('[data-action="approve"]')
    );
    const after = buttons.slice(index + 1).find(Boolean);
    const before = buttons
      .slice(0, index + 1)
      .reverse()
      .find(Boolean);
    return after ?? before ?? this._heading;
  }

  /** The optional note sent with a decision; kept across redraws until the decision. */
  private _note(record: IApproval): HTMLInputElement {
    const { trans } = this.model;
    const input = h('input', {
      type: 'text',
      class: 'jp-RecallApprovals-note',
      'data-action': 'note',
      placeholder: trans.__('note (optional)'),
      'aria-label': trans.__('Note for %1', record.summary),
      onInput: () => this._notes.set(record.id, input.value)
    });
    input.value = this._notes.get(record.id) ?? '';
    return input;
  }

  private _item(record: IApproval): HTMLElement {
    const { trans } = this.model;
    const decided = record.decided_by
      ? trans.__('%1 by %2', label(approvalStatusLabels(trans), record.status), record.decided_by)
      : label(approvalStatusLabels(trans), record.status);
    const item = h(
      'li',
      {
        class: 'jp-RecallApprovals-item',
        'data-approval-id': record.id,
        'data-status': record.status
      },
      h('code', { class: 'jp-RecallApprovals-call' }, record.summary),
      h(
        'div',
        { class: 'jp-RecallSidebar-description' },
        trans.__('asked by %1 · %2', record.asked_by, record.source)
      ),
      h(
        'span',
        { class: `jp-RecallSidebar-badge jp-mod-${record.status}`, 'data-status': record.status },
        decided
      )
    );
    if (record.status !== 'pending') {
      item.append(...this._decision(record));
    }
    if (record.status === 'pending') {
      item.append(
        this._note(record),
        h(
          'div',
          { class: 'jp-RecallApprovals-buttons' },
          this._button(record, 'approve', trans.__('Approve')),
          this._button(record, 'deny', trans.__('Deny'))
        )
      );
    }
    return item;
  }

  /** When a settled request was decided (or expired), and the note recorded with it. */
  private _decision(record: IApproval): HTMLElement[] {
    const { trans } = this.model;
    const parts: HTMLElement[] = [];
    if (record.decided_at) {
      const when = formatTime(record.decided_at, new Date(), 'relative-absolute');
      parts.push(
        h(
          'div',
          {
            class: 'jp-RecallSidebar-description jp-RecallApprovals-decision',
            title: formatFull(record.decided_at)
          },
          record.status === 'expired' ? trans.__('expired %1', when) : trans.__('decided %1', when)
        )
      );
    }
    if (record.note) {
      parts.push(
        h('div', { class: 'jp-RecallApprovals-decidedNote' }, trans.__('Note: %1', record.note))
      );
    }
    return parts;
  }

  private _button(record: IApproval, decision: Decision, label: string): HTMLElement {
    return h(
      'button',
      {
        type: 'button',
        class: `jp-Button jp-mod-styled jp-RecallApprovals-${decision}`,
        'data-action': decision,
        onclick: () => void this._decide(record, decision)
      },
      label
    );
  }

  private _heading = h('h3', { tabindex: '-1' }, this.model.trans.__('Approvals'));

  private async _decide(record: IApproval, decision: Decision): Promise<void> {
    await this.model.decide(record.id, decision, this._notes.get(record.id));
    this._notes.delete(record.id);
  }

  private _notes = new Map<string, string>();
  private _error = h('div', { class: 'jp-RecallApprovals-error', role: 'alert' });
  private _list = h('ul', { class: 'jp-RecallApprovals-list' });
}

/** The status bar item: how many calls wait for a decision (hidden when none); opens the panel. */
export class ApprovalsStatus extends Widget {
  constructor(
    readonly model: ApprovalsModel,
    readonly open: () => void
  ) {
    super({ node: h('button', { type: 'button', class: 'jp-RecallApprovalsStatus' }) });
    this.node.addEventListener('click', () => this.open());
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    this.model.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const count = this.model.pending.length;
    const text = this.model.trans._n('%1 approval waiting', '%1 approvals waiting', count);
    this.node.textContent = text;
    this.node.dataset.pending = String(count);
    this.node.title = this.model.trans.__('%1. Open the Recall approvals', text);
  }
}

const RECENT = 50;

/**
 * The approvals inbox in the page: its panel in the left area, the command "Show approvals",
 * the status bar count, a toast (with Approve / Deny) when a call asks, live through events.
 */
export function addApprovals(
  app: JupyterFrontEnd,
  api: RecallApi,
  trans: TranslationBundle,
  palette: ICommandPalette | null,
  statusBar: IStatusBar | null
): ApprovalsModel {
  const model = new ApprovalsModel(api, trans);
  const panel = new ApprovalsPanel(model);
  panel.title.icon = recallIcon;
  app.shell.add(panel, 'left', { rank: 851 });
  const show = () => app.shell.activateById(panel.id);
  app.commands.addCommand(ShowApprovals, {
    label: trans.__('Show approvals'),
    caption: trans.__('Open the Recall approvals: tool calls waiting for a decision'),
    execute: show
  });
  palette?.addItem({ command: ShowApprovals, category: trans.__('Recall') });
  statusBar?.registerStatusItem('jupyter-recall:approvals', {
    item: new ApprovalsStatus(model, show),
    align: 'left',
    rank: 5,
    // The status bar shows and hides its items itself (a hidden widget is shown again when
    // it is registered): shown only while an approval waits.
    isActive: () => model.pending.length > 0,
    activeStateChanged: model.changed
  });
  // A request decided (here, in the panel, over REST, from the CLI) or expired: its toast
  // goes, as its buttons could only fail.
  const toasts = new Map<string, string>();
  model.changed.connect(() => dismissDecided(model, toasts));
  app.serviceManager.events.stream.connect((_, emission: Event.Emission) => {
    if (emission.schema_id !== SCHEMA_ID) {
      return;
    }
    const event = emission as unknown as { type?: unknown; approval?: unknown };
    const record = approvalOf(event);
    if (record) {
      model.apply(record);
      if (event.type === 'approval.created') {
        toasts.set(record.id, toast(model, record, show));
      }
    }
  });
  void app.restored.then(() => model.refresh());
  return model;
}

/** Dismisses the toasts (approval id -> toast id) of the requests no longer waiting. */
function dismissDecided(model: ApprovalsModel, toasts: Map<string, string>): void {
  const waiting = new Set(model.pending.map(record => record.id));
  for (const [approval, id] of toasts) {
    if (!waiting.has(approval)) {
      Notification.dismiss(id);
      toasts.delete(approval);
    }
  }
}

/** The toast of a request waiting for a decision; its id. */
function toast(model: ApprovalsModel, record: IApproval, show: () => void): string {
  const { trans } = model;
  return Notification.emit(trans.__('Approval needed: %1', record.summary), 'warning', {
    autoClose: false,
    actions: [
      { label: trans.__('Approve'), callback: () => void model.decide(record.id, 'approve') },
      { label: trans.__('Deny'), callback: () => void model.decide(record.id, 'deny') },
      { label: trans.__('Show approvals'), callback: show }
    ]
  });
}
