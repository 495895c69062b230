/**
 * Jobs and runs as the REST API sends them, for the unit tests: defaults, and the fields a
 * test is about as `extra`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import { IJob, IRun } from '../src/state';

export function job(id: string, extra: Partial<IJob> = {}): IJob {
  return {
    id,
    name: `job ${id}`,
    kind: 'job',
    status: 'active',
    description: 'every day at 09:00',
    when: 'every day at 09:00',
    tz: 'UTC',
    pending: true,
    target: { type: 'server' },
    next_fire_at: '2030-01-01T09:00:00Z',
    ...extra
  };
}

export function run(id: string, jobId: string, extra: Partial<IRun> = {}): IRun {
  return {
    id,
    job_id: jobId,
    status: 'running',
    trigger: 'schedule',
    scheduled_for: '2030-01-01T09:00:00Z',
    started_at: '2030-01-01T09:00:00Z',
    finished_at: null,
    error: null,
    ...extra
  };
}

/**
 * A translation bundle that keeps the English strings (as JupyterLab's null translator does):
 * `%1`, `%2`, ... take the arguments, `_n` picks the singular or the plural.
 */
export const trans = {
  __: (text: string, ...args: unknown[]) =>
    text.replace(/%(\d)/g, (_, n: string) => String(args[Number(n) - 1])),
  _n: (singular: string, plural: string, count: number, ...args: unknown[]) =>
    (count === 1 ? singular : plural).replace(/%(\d)/g, (_, n: string) =>
      String(n === '1' ? count : args[Number(n) - 2])
    )
} as unknown as TranslationBundle;
