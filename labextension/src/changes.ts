/**
 * A callback that calls `notify` only when `read()` gives another value than at its last call
 * (compared with `===`). JupyterLab's command palette draws all its items again on every
 * command change: told of each change of the sidebar's model, an open palette was redrawn with
 * every event, and a click could land on an item just replaced.
 */
export function whenChanged<T>(read: () => T, notify: () => void): () => void {
  let last = read();
  return () => {
    const now = read();
    if (now !== last) {
      last = now;
      notify();
    }
  };
}
