import { formatAbsolute, formatFull, formatRelative, formatTime } from '../src/time';

const now = new Date('2030-01-01T09:00:00Z');
const en = { locale: 'en-GB', timeZone: 'UTC' };

describe('formatRelative', () => {
  it('says an instant relative to now in the largest fitting unit', () => {
    expect(formatRelative('2030-01-01T09:29:00Z', now, en)).toBe('in 29 min');
    expect(formatRelative('2030-01-01T06:00:00Z', now, en)).toBe('3 hr ago');
    expect(formatRelative('2030-01-01T09:00:30Z', now, en)).toBe('in 30 sec');
    expect(formatRelative('2030-01-03T09:00:00Z', now, en)).toBe('in 2 days');
  });

  it("speaks the user's language", () => {
    // Intl puts no-break spaces between number and unit where the language wants them.
    const spaced = (text: string) => text.replace(/\s/g, ' ');
    expect(spaced(formatRelative('2030-01-01T09:29:00Z', now, { locale: 'fr' }))).toBe(
      'dans 29 min'
    );
    expect(spaced(formatRelative('2030-01-01T06:00:00Z', now, { locale: 'de' }))).toBe(
      'vor 3 Std.'
    );
  });
});

describe('formatAbsolute', () => {
  it("shows the instant in the user's zone and locale, never ISO next to US format", () => {
    expect(formatAbsolute('2030-01-01T09:05:00Z', en)).toBe('1 Jan 2030, 09:05');
    expect(
      formatAbsolute('2030-01-01T09:05:00Z', { locale: 'en-GB', timeZone: 'Asia/Tokyo' })
    ).toBe('1 Jan 2030, 18:05');
    expect(formatAbsolute('2030-01-01T09:05:00Z', { locale: 'fr', timeZone: 'Europe/Paris' })).toBe(
      '1 janv. 2030, 10:05'
    );
  });

  it('has a full reading with seconds and the zone for a hover', () => {
    expect(formatFull('2030-01-01T09:05:07Z', { locale: 'en-GB', timeZone: 'Europe/Paris' })).toBe(
      '1 Jan 2030, 10:05:07 CET'
    );
  });
});

describe('formatTime', () => {
  const at = '2030-01-01T09:29:00Z';

  it('follows the timeFormat setting', () => {
    expect(formatTime(at, now, 'relative-absolute', en)).toBe('in 29 min (1 Jan 2030, 09:29)');
    expect(formatTime(at, now, 'absolute', en)).toBe('1 Jan 2030, 09:29');
    expect(formatTime(at, now, 'relative', en)).toBe('in 29 min');
  });

  it('shows nothing for no instant or a malformed one', () => {
    expect(formatTime(null, now, 'relative-absolute', en)).toBe('');
    expect(formatTime(undefined, now, 'absolute', en)).toBe('');
    expect(formatTime('not a time', now, 'relative', en)).toBe('');
  });
});
