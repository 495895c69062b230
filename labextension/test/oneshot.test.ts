import { oneShotInstant } from '../src/state';
import { job } from './records';

describe('oneShotInstant', () => {
  const at = '2026-11-25T20:19:06+00:00';

  it("is a one-shot's instant whether or not it is still due", () => {
    expect(oneShotInstant(job('a', { schedule_kind: 'once', canonical: at }))).toBe(at);
    const done = job('b', {
      schedule_kind: 'once',
      canonical: at,
      status: 'completed',
      next_fire_at: null
    });
    expect(oneShotInstant(done)).toBe(at);
  });

  it('is null for another schedule, or a canonical form that is no instant', () => {
    expect(oneShotInstant(job('c', { schedule_kind: 'cron', canonical: '0 9 * * *' }))).toBe(null);
    expect(oneShotInstant(job('d', { schedule_kind: 'once', canonical: 'soon' }))).toBe(null);
    expect(oneShotInstant(job('e', { schedule_kind: 'once' }))).toBe(null);
  });
});
