/** A small element builder: the views build plain DOM (no framework to ship). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: { [name: string]: string | boolean | ((event: Event) => void) } = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else if (value !== false) {
      element.setAttribute(name, value);
    }
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) {
      element.append(child);
    }
  }
  return element;
}

/**
 * Replaces the children of `list` and puts the keyboard focus back where it was: on the new
 * element of the same row (its `keyAttribute`) and the same `data-action`, or on the row. Views
 * are rebuilt at every event; without this, a keyboard user's focus would drop to the page.
 * When that row is gone (deleted, cancelled while finished jobs are hidden) or cannot take the
 * focus, it goes to the row now at its place (or the last row), else to `fallback`'s answer
 * (given the row's old index).
 */
export function replaceKeepingFocus(
  list: HTMLElement,
  keyAttribute: string,
  children: Node[],
  fallback?: (index: number) => HTMLElement | null | undefined
): void {
  const active = document.activeElement;
  const focused = active instanceof HTMLElement && list.contains(active) ? active : null;
  const row = focused?.closest(`[${keyAttribute}]`) ?? null;
  const key = row?.getAttribute(keyAttribute) ?? null;
  const action = focused && focused !== row ? focused.getAttribute('data-action') : null;
  const rowsOf = () => Array.from(list.querySelectorAll<HTMLElement>(`[${keyAttribute}]`));
  const index = row ? rowsOf().indexOf(row as HTMLElement) : -1;
  list.replaceChildren(...children);
  if (key === null) {
    return;
  }
  const rows = rowsOf();
  const newRow = rows.find(element => element.getAttribute(keyAttribute) === key);
  const target = action
    ? Array.from(newRow?.querySelectorAll<HTMLElement>('[data-action]') ?? []).find(
        element => element.getAttribute('data-action') === action
      )
    : newRow;
  (target ?? newRow)?.focus({ preventScroll: true });
  if (list.contains(document.activeElement)) {
    return;
  }
  // The row went, or has nothing focusable left (its buttons gone with its state).
  const others = rows.filter(element => element !== newRow);
  const neighbour = newRow ? null : (others[Math.min(index, others.length - 1)] ?? null);
  neighbour?.focus({ preventScroll: true });
  if (!list.contains(document.activeElement)) {
    fallback?.(index)?.focus({ preventScroll: true });
  }
}
