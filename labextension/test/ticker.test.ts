import { TICK_MS, Ticker, ticker } from '../src/time';

describe('Ticker', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('shares one interval between its subscribers, every TICK_MS', () => {
    const setInterval = jest.spyOn(globalThis, 'setInterval');
    const clock = new Ticker();
    const sidebar = jest.fn();
    const banner = jest.fn();
    const first = clock.subscribe(sidebar);
    const second = clock.subscribe(banner);
    expect(setInterval).toHaveBeenCalledTimes(1);
    expect(setInterval).toHaveBeenCalledWith(expect.any(Function), TICK_MS);
    expect(jest.getTimerCount()).toBe(1);
    expect(clock.subscribers).toBe(2);

    jest.advanceTimersByTime(TICK_MS - 1);
    expect(sidebar).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(sidebar).toHaveBeenCalledTimes(1);
    expect(banner).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(2 * TICK_MS);
    expect(sidebar).toHaveBeenCalledTimes(3);
    expect(banner).toHaveBeenCalledTimes(3);

    first.dispose();
    second.dispose();
    setInterval.mockRestore();
  });

  it('clears its interval when the last subscriber leaves, and starts again for the next', () => {
    const clearInterval = jest.spyOn(globalThis, 'clearInterval');
    const clock = new Ticker();
    const first = clock.subscribe(jest.fn());
    const second = clock.subscribe(jest.fn());

    first.dispose();
    expect(clearInterval).not.toHaveBeenCalled();
    expect(clock.isRunning).toBe(true);
    expect(jest.getTimerCount()).toBe(1);

    second.dispose();
    expect(clearInterval).toHaveBeenCalledTimes(1);
    expect(clock.isRunning).toBe(false);
    expect(clock.subscribers).toBe(0);
    expect(jest.getTimerCount()).toBe(0);

    // Disposing twice is harmless, as Lumino's IDisposable asks.
    second.dispose();
    expect(second.isDisposed).toBe(true);
    expect(clearInterval).toHaveBeenCalledTimes(1);

    const late = jest.fn();
    const third = clock.subscribe(late);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(TICK_MS);
    expect(late).toHaveBeenCalledTimes(1);
    third.dispose();
    expect(jest.getTimerCount()).toBe(0);
    clearInterval.mockRestore();
  });

  it('no longer calls a disposed subscriber', () => {
    const clock = new Ticker();
    const gone = jest.fn();
    const staying = jest.fn();
    const leaving = clock.subscribe(gone);
    const kept = clock.subscribe(staying);

    jest.advanceTimersByTime(TICK_MS);
    leaving.dispose();
    expect(leaving.isDisposed).toBe(true);
    jest.advanceTimersByTime(3 * TICK_MS);
    expect(gone).toHaveBeenCalledTimes(1);
    expect(staying).toHaveBeenCalledTimes(4);
    kept.dispose();
  });

  it('skips a subscriber disposed by an earlier one in the same tick', () => {
    const clock = new Ticker();
    const later = jest.fn();
    const second: { dispose(): void }[] = [];
    const first = clock.subscribe(() => second[0].dispose());
    second.push(clock.subscribe(later));

    jest.advanceTimersByTime(TICK_MS);
    expect(later).not.toHaveBeenCalled();
    first.dispose();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('keeps calling the others when one subscriber throws', () => {
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const clock = new Ticker();
    const failing = clock.subscribe(() => {
      throw new Error('boom');
    });
    const fine = jest.fn();
    const kept = clock.subscribe(fine);

    jest.advanceTimersByTime(TICK_MS);
    expect(fine).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledTimes(1);
    failing.dispose();
    kept.dispose();
    error.mockRestore();
  });

  it('is one instance for the page, ticking every TICK_MS', () => {
    expect(ticker).toBeInstanceOf(Ticker);
    expect(ticker.interval).toBe(TICK_MS);
    expect(ticker.isRunning).toBe(false);
  });
});
