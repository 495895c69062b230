import { DEFAULT_SETTINGS, readSettings } from '../src/settings';

describe('readSettings', () => {
  it('gives the defaults for nothing set', () => {
    expect(readSettings({})).toEqual(DEFAULT_SETTINGS);
    expect(readSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS.hideFinished).toBe(true);
  });

  it('reads what the Settings Editor saved', () => {
    const read = readSettings({
      timeFormat: 'absolute',
      toasts: { failedRuns: false, watcherAlerts: true, backgroundTasks: false },
      defaultTarget: 'headless',
      hideFinished: false
    });
    expect(read).toEqual({
      timeFormat: 'absolute',
      toasts: {
        failedRuns: false,
        watcherAlerts: true,
        backgroundTasks: false,
        uiNotifications: true
      },
      defaultTarget: 'headless',
      hideFinished: false
    });
  });

  it('keeps the default of a value a hand-edited file got wrong', () => {
    const read = readSettings({
      timeFormat: 'sundial',
      toasts: { failedRuns: 'no' },
      defaultTarget: 'cloud',
      hideFinished: 0
    });
    expect(read).toEqual(DEFAULT_SETTINGS);
  });
});
