/**
 * What arrives while listings are on their way. A listing is read before the events that land
 * while its answer travels: each listing in flight collects them, to apply them again on top
 * of its answer (`withArrivals`, `withListing`).
 */
export class Arrivals<T> {
  /** `read()`'s answer, with what was recorded while it was on its way. */
  async during<R>(read: () => Promise<R>): Promise<{ answer: R; arrived: T[] }> {
    const arrived: T[] = [];
    this._open.add(arrived);
    try {
      return { answer: await read(), arrived };
    } finally {
      this._open.delete(arrived);
    }
  }

  /** An event applied now: every listing still on its way gets it too. */
  record(item: T): void {
    for (const arrived of this._open) {
      arrived.push(item);
    }
  }

  private _open = new Set<T[]>();
}
