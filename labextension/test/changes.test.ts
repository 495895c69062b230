import { whenChanged } from '../src/changes';

describe('whenChanged', () => {
  it('notifies when the value read changes, not on every call', () => {
    let value = 'a';
    let notified = 0;
    const update = whenChanged(
      () => value,
      () => notified++
    );
    update();
    update();
    expect(notified).toBe(0);
    value = 'b';
    update();
    update();
    expect(notified).toBe(1);
    value = 'a';
    update();
    expect(notified).toBe(2);
  });
});
