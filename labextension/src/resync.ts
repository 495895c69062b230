import { ISignal } from '@lumino/signaling';

/**
 * When the live updates may have missed events, and the one re-sync that follows. The service
 * manager's public `connectionFailure` signal reports each lost connection to the server
 * (Lab's event socket has no public "reconnected" signal); the next event, the page becoming
 * visible or the browser coming back online then triggers one full re-sync from REST.
 */
export class Resync {
  constructor(
    failures: ISignal<unknown, Error>,
    readonly refresh: () => void
  ) {
    failures.connect(() => (this._stale = true));
  }

  /** Whether a re-sync is due. */
  get stale(): boolean {
    return this._stale;
  }

  /** Re-syncs once if a connection was lost since the last time. */
  check(): void {
    if (this._stale) {
      this._stale = false;
      this.refresh();
    }
  }

  private _stale = false;
}
