import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { refusal } from './answers';
import type { IJobCounts, IJobPage } from './pages';
import type { IJob, IRun, IWatcher } from './state';

/** An error answer of /api/recall, with the server's message (it names the field at fault). */
export class RecallApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly field?: string
  ) {
    super(message);
  }
}

export interface IParseResult {
  when: string;
  kind: string;
  canonical: string;
  description: string;
  tz: string;
  next_fire_times: string[];
}

/** The error body of the API (docs/rest.md): the message, the field and what it accepts. */
export interface IErrorBody {
  message: string;
  field?: string;
  accepted?: string[];
}

export type IParseCheck =
  ({ valid: true } & IParseResult) | { valid: false; when: string; error: IErrorBody };

/** The REST client of /api/recall (docs/rest.md), through Lab's server connection. */
export class RecallApi {
  constructor(readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = URLExt.join(this.settings.baseUrl, 'api/recall', path);
    const init: RequestInit = { method };
    if (body !== undefined || method !== 'GET') {
      init.body = JSON.stringify(body ?? {});
    }
    const response = await ServerConnection.makeRequest(url, init, this.settings);
    const answer = {
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers.get('Content-Type') ?? '',
      text: await response.text()
    };
    if (!response.ok) {
      const { message, field } = refusal(answer);
      throw new RecallApiError(message, response.status, field);
    }
    return (answer.text ? JSON.parse(answer.text) : null) as T;
  }

  async jobs(query: { [key: string]: string } = {}): Promise<IJob[]> {
    const search = new URLSearchParams(query).toString();
    const answer = await this.request<{ jobs: IJob[] }>('GET', search ? `jobs?${search}` : 'jobs');
    return answer.jobs;
  }

  /** One page of the user's jobs, filtered and sorted by the server (pages.ts). */
  jobsPage(query: { [key: string]: string }): Promise<IJobPage> {
    return this.request<IJobPage>('GET', `jobs?${new URLSearchParams(query).toString()}`);
  }

  /** How many jobs match (all the user's, or those of the filters given), by status. */
  counts(query: { [key: string]: string } = {}): Promise<IJobCounts> {
    const search = new URLSearchParams(query).toString();
    return this.request<IJobCounts>('GET', search ? `jobs/counts?${search}` : 'jobs/counts');
  }

  async runs(jobId: string): Promise<IRun[]> {
    const answer = await this.request<{ runs: IRun[] }>('GET', `jobs/${jobId}/runs`);
    return answer.runs;
  }

  run(runId: string): Promise<IRun> {
    return this.request<IRun>('GET', `runs/${runId}`);
  }

  /** pause, resume, skip, cancel or trigger. */
  act(jobId: string, action: string): Promise<unknown> {
    return this.request('POST', `jobs/${jobId}/${action}`);
  }

  parse(when: string, tz?: string): Promise<IParseResult> {
    return this.request<IParseResult>('POST', 'parse', tz ? { when, tz } : { when });
  }

  /**
   * Checks what the user typed: an expression that does not parse is an answer naming why
   * (`valid: false`), not an error, so a form checking each keystroke fails no request.
   */
  check(when: string, tz?: string): Promise<IParseCheck> {
    return this.request<IParseCheck>(
      'POST',
      'parse',
      tz ? { when, tz, check: true } : { when, check: true }
    );
  }

  create(job: { [key: string]: unknown }): Promise<IJob> {
    return this.request<IJob>('POST', 'jobs', job);
  }

  /** Changes a job's schedule, name, ... (PATCH: only the fields given). */
  update(jobId: string, changes: { [key: string]: unknown }): Promise<IJob> {
    return this.request<IJob>('PATCH', `jobs/${jobId}`, changes);
  }

  /** Deletes a job and its run history (DELETE answers 204, no body). */
  async remove(jobId: string): Promise<void> {
    await this.request('DELETE', `jobs/${jobId}`);
  }

  async watchers(): Promise<IWatcher[]> {
    const answer = await this.request<{ watchers: IWatcher[] }>('GET', 'watchers');
    return answer.watchers;
  }

  /** A watcher with its last check (`last_result`). */
  watcher(watcherId: string): Promise<IWatcher> {
    return this.request<IWatcher>('GET', `watchers/${watcherId}?last_n=1`);
  }
}
