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
 */
export function replaceKeepingFocus(
  list: HTMLElement,
  keyAttribute: string,
  children: Node[]
): void {
  const active = document.activeElement;
  const focused = active instanceof HTMLElement && list.contains(active) ? active : null;
  const row = focused?.closest(`[${keyAttribute}]`) ?? null;
  const key = row?.getAttribute(keyAttribute) ?? null;
  const action = focused && focused !== row ? focused.getAttribute('data-action') : null;
  list.replaceChildren(...children);
  if (key === null) {
    return;
  }
  const newRow = Array.from(list.querySelectorAll<HTMLElement>(`[${keyAttribute}]`)).find(
    element => element.getAttribute(keyAttribute) === key
  );
  const target = action
    ? Array.from(newRow?.querySelectorAll<HTMLElement>('[data-action]') ?? []).find(
        element => element.getAttribute('data-action') === action
      )
    : newRow;
  (target ?? newRow)?.focus({ preventScroll: true });
}
