import type { TranslationBundle } from '@jupyterlab/translation';

import {
  approvalStatusLabels,
  jobKindLabels,
  jobStatusLabels,
  label,
  runStatusLabels,
  runTriggerLabels
} from '../src/labels';
import { JOB_KINDS, JOB_STATUSES } from '../src/state';
import { trans } from './records';

/** A bundle that marks every string it translates, as a translation would change it. */
const french = {
  __: (text: string) => `fr:${text}`
} as unknown as TranslationBundle;

describe('labels', () => {
  it('has a word for every job status and kind the filters offer', () => {
    for (const status of JOB_STATUSES) {
      expect(label(jobStatusLabels(french), status)).toBe(`fr:${status}`);
    }
    for (const kind of JOB_KINDS) {
      expect(label(jobKindLabels(french), kind)).toBe(`fr:${kind}`);
    }
  });

  it("shows each vocabulary's values through the translation", () => {
    expect(label(runStatusLabels(french), 'succeeded')).toBe('fr:succeeded');
    expect(label(runTriggerLabels(french), 'manual')).toBe('fr:manual');
    expect(label(runTriggerLabels(french), 'after')).toBe('fr:after');
    expect(label(approvalStatusLabels(french), 'denied')).toBe('fr:denied');
  });

  it('reads the words of two values in English', () => {
    expect(label(runStatusLabels(trans), 'timed_out')).toBe('timed out');
    expect(label(runTriggerLabels(trans), 'catchup')).toBe('catch-up');
    expect(label(jobStatusLabels(trans), 'active')).toBe('active');
  });

  it('shows a value it has no word for as it came, and nothing for none', () => {
    expect(label(jobStatusLabels(french), 'archived')).toBe('archived');
    expect(label(jobStatusLabels(french), 'toString')).toBe('toString');
    expect(label(runTriggerLabels(french), null)).toBe('');
  });
});
