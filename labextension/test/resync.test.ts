import { Signal } from '@lumino/signaling';

import { Resync } from '../src/resync';

describe('Resync', () => {
  it('re-syncs once after a lost connection, and not before', () => {
    const failures = new Signal<object, Error>({});
    let refreshed = 0;
    const resync = new Resync(failures, () => refreshed++);
    resync.check();
    expect(refreshed).toBe(0);

    failures.emit(new Error('network'));
    failures.emit(new Error('network'));
    expect(resync.stale).toBe(true);
    resync.check();
    resync.check();
    expect(refreshed).toBe(1);
    expect(resync.stale).toBe(false);
  });
});
