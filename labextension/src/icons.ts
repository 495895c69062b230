import { LabIcon } from '@jupyterlab/ui-components';

const clockSvg =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24"><path class="jp-icon3" fill="#616161" d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16zm.5-13H11v6l5.2 3.2.8-1.3-4.5-2.7V7z"/></svg>';

/** The clock of the sidebar's tab and of notebooks with a pending recall (theme-coloured). */
export const recallIcon = new LabIcon({ name: 'jupyter-recall:clock', svgstr: clockSvg });

/**
 * A clock marking something that has a pending recall, named for screen readers (without a
 * label it is decoration next to text that says it).
 */
export function pendingClock(label: string | null): HTMLElement {
  const node = recallIcon.element({ tag: 'span', className: 'jp-RecallSidebar-clock' });
  if (label) {
    node.setAttribute('role', 'img');
    node.setAttribute('aria-label', label);
    node.title = label;
  } else {
    node.setAttribute('aria-hidden', 'true');
  }
  return node;
}
