import { h } from './dom';
import { jobStatusLabels, label } from './labels';
import { RecallModel } from './model';
import { describeCheck, INotification, IWatcher } from './state';

const MESSAGE_CLIP = 500;

/** The user's watchers, each with what its last check saw. */
export class WatcherList {
  constructor(readonly model: RecallModel) {
    const { trans } = model;
    this.node.setAttribute('aria-label', trans.__('Watchers'));
    this._list.setAttribute('aria-label', trans.__('Watcher list'));
    this.node.append(h('h3', {}, trans.__('Watchers')), this._list);
  }

  readonly node = h('section', { class: 'jp-RecallSidebar-watchers' });

  render(now: Date): void {
    const watchers = Object.values(this.model.state.watchers).sort((a, b) =>
      (a.label || a.tool_name).localeCompare(b.label || b.tool_name)
    );
    this._list.replaceChildren(
      ...(watchers.length
        ? watchers.map(watcher => this._watcher(watcher, now))
        : [h('li', { class: 'jp-RecallSidebar-empty' }, this.model.trans.__('No watchers'))])
    );
  }

  private _watcher(watcher: IWatcher, now: Date): HTMLElement {
    const { trans } = this.model;
    const last = watcher.last_result;
    const checked = watcher.last_check_at
      ? trans.__('last %1', this.model.time(watcher.last_check_at, now))
      : '';
    return h(
      'li',
      {
        class: 'jp-RecallSidebar-watcher',
        'data-watcher-id': watcher.watcher_id,
        'data-status': watcher.status
      },
      h(
        'div',
        { class: 'jp-RecallSidebar-jobTitle' },
        h('span', { class: 'jp-RecallSidebar-name' }, watcher.label || watcher.tool_name),
        h(
          'span',
          {
            class: `jp-RecallSidebar-badge jp-mod-${watcher.status}`,
            'data-status': watcher.status
          },
          label(jobStatusLabels(trans), watcher.status)
        )
      ),
      h(
        'div',
        { class: 'jp-RecallSidebar-description' },
        [
          trans.__('%1 every %2 s', watcher.tool_name, watcher.interval),
          trans._n('%1 check', '%1 checks', watcher.checks),
          trans.__('%1 notified', watcher.notifications),
          checked
        ]
          .filter(Boolean)
          .join(' · ')
      ),
      h(
        'div',
        {
          class: `jp-RecallSidebar-lastResult${last && !last.success ? ' jp-mod-failed' : ''}`,
          'aria-label': trans.__('Last result')
        },
        describeCheck(last, trans)
      )
    );
  }

  private _list = h('ul', { class: 'jp-RecallSidebar-watcherList' });
}

/** Notifications received since the page loaded (watchers, jobs, background tasks, ...). */
export class NotificationList {
  constructor(readonly model: RecallModel) {
    const { trans } = model;
    const clear = h(
      'button',
      {
        type: 'button',
        class: 'jp-RecallSidebar-clear',
        'aria-label': trans.__('Clear notifications'),
        onClick: () => this.model.clearNotifications()
      },
      trans.__('Clear')
    );
    this.node.setAttribute('aria-label', trans.__('Notifications'));
    this.node.append(
      h(
        'div',
        { class: 'jp-RecallSidebar-sectionTitle' },
        h('h3', {}, trans.__('Notifications')),
        clear
      ),
      this._list
    );
  }

  readonly node = h('section', { class: 'jp-RecallSidebar-notifications' });

  render(now: Date): void {
    const notifications = this.model.state.notifications;
    this._list.replaceChildren(
      ...(notifications.length
        ? notifications.map(notification => this._notification(notification, now))
        : [h('li', { class: 'jp-RecallSidebar-empty' }, this.model.trans.__('No notifications'))])
    );
  }

  private _notification(notification: INotification, now: Date): HTMLElement {
    const { trans } = this.model;
    const source = notification.source ?? {};
    const message =
      notification.message.length > MESSAGE_CLIP
        ? `${notification.message.slice(0, MESSAGE_CLIP)}…`
        : notification.message;
    const meta = [
      source.kind ?? '',
      notification.session ?? '',
      notification.delivered_to === 'session' ? trans.__('sent to its notebook') : '',
      this.model.time(notification.created_at, now)
    ].filter(Boolean);
    const showRun =
      source.job_id && source.run_id
        ? h(
            'button',
            {
              type: 'button',
              class: 'jp-RecallSidebar-showRun',
              onClick: () => void this.model.select(source.job_id!, source.run_id!)
            },
            trans.__('Show run')
          )
        : null;
    return h(
      'li',
      {
        class: `jp-RecallSidebar-notification jp-mod-${notification.priority ?? 'normal'}`,
        'data-notification-id': notification.id
      },
      h('div', { class: 'jp-RecallSidebar-name' }, notification.title || message.split('\n', 1)[0]),
      h('pre', { class: 'jp-RecallSidebar-message' }, message),
      h('div', { class: 'jp-RecallSidebar-description' }, meta.join(' · ')),
      showRun
    );
  }

  private _list = h('ul', { class: 'jp-RecallSidebar-notificationList' });
}
