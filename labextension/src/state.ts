import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * The sidebar's data and the pure functions that change it: no DOM, no JupyterLab, so the
 * reducer and the formatting are unit-tested on their own (test/state.test.ts).
 */

export const SCHEMA_ID = 'https://events.jupyter.org/jupyter_recall/change/v1';

export const JOB_STATUSES = ['active', 'paused', 'completed', 'failed', 'cancelled'] as const;

/** States in which a job never fires again (hidden by default, removed by Clear finished). */
export const FINISHED_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export const JOB_KINDS = ['job', 'recall', 'watcher'] as const;

/** The notifications the sidebar keeps (newest first); older ones drop off. */
export const MAX_NOTIFICATIONS = 50;

export interface ITarget {
  type: string;
  path?: string;
  kernel_id?: string;
  kernel_name?: string;
}

export interface IJob {
  id: string;
  name: string;
  kind: string;
  status: string;
  description: string;
  when: string;
  tz: string;
  pending: boolean;
  session?: string | null;
  target: ITarget;
  next_fire_at: string | null;
  schedule_kind?: string;
  /** The schedule's normal form: a one-shot's is its instant (ISO 8601 with its offset). */
  canonical?: string;
  /** The job's policies; retries read here (the run history shows 'attempt 2/3'). */
  policies?: { retries?: { max: number; backoff?: number } | null; [key: string]: unknown };
  /** The upstream of a job fired by another job's runs (schedule_kind 'after'). */
  after?: { job: string; on: string } | null;
  run_count?: number;
  failure_count?: number;
  last_status?: string | null;
  last_error?: string | null;
  /** Consecutive failed occurrences, while policies.pause_after_failures is set. */
  failure_streak?: number;
  /** Why the server paused the job (after its failures); null when a person did. */
  paused_reason?: string | null;
  /** What the job allows in its state (run_now, pause, resume, skip, cancel, edit): the
   * server's one rule; see actions.ts for servers that do not send it. */
  allowed_actions?: string[];
}

export interface IRun {
  id: string;
  job_id: string;
  status: string;
  trigger: string;
  scheduled_for: string;
  started_at: string | null;
  finished_at: string | null;
  duration?: number | null;
  output?: string;
  error: string | null;
  /** 1 for an occurrence's first run, then 2, 3... for its retries. */
  attempt?: number;
  /** Set while the next attempt of the run's occurrence waits: when it starts. */
  retry_at?: string | null;
}

/**
 * Which attempt of its occurrence a run is, and of how many (policies.retries.max + 1, or
 * null when the job has no retries); null for a first run of a job that does not retry.
 */
export function attemptOf(run: IRun, job?: IJob): [number, number | null] | null {
  const max = job?.policies?.retries?.max;
  const attempts = typeof max === 'number' ? max + 1 : null;
  const attempt = run.attempt ?? 1;
  if (attempts === null && attempt <= 1) {
    return null;
  }
  return [attempt, attempts];
}

/** A notification as the change events carry it (docs/notifications.md). */
export interface INotification {
  id: string;
  message: string;
  title?: string;
  priority?: string;
  tags?: string[];
  structured_data?: { [key: string]: unknown };
  session?: string | null;
  source?: { kind?: string; job_id?: string; run_id?: string };
  created_at: string;
  /** `session` (the notebook's kernel got it) or `ui` (for the user). */
  delivered_to?: string;
  buffered?: boolean;
}

/** One check of a watcher (`last_result` of GET /api/recall/watchers/{id}). */
export interface ICheck {
  check: number;
  checked_at: string;
  success: boolean;
  result: unknown;
  notified: boolean;
  reason?: string | null;
  run_id?: string | null;
}

export interface IWatcher {
  watcher_id: string;
  tool_name: string;
  label: string;
  interval: number;
  notify_when: string;
  status: string;
  session?: string | null;
  checks: number;
  notifications: number;
  last_check_at: string | null;
  next_check_at: string | null;
  last_result?: ICheck | null;
}

export interface IChangeEvent {
  type: string;
  owner?: string;
  job?: IJob | null;
  run?: IRun | null;
  text?: string | null;
  offset?: number | null;
  notification?: INotification | null;
}

export interface IState {
  jobs: { [id: string]: IJob };
  /** Runs of the jobs whose history was loaded, newest first. */
  runs: { [jobId: string]: IRun[] };
  watchers: { [id: string]: IWatcher };
  /** Notifications received since the page loaded, newest first. */
  notifications: INotification[];
}

export interface IFilter {
  status: string;
  kind: string;
  /** A notebook path ('' = any). */
  notebook: string;
  query: string;
  /** Only the jobs of notebooks that have a pending recall. */
  pendingOnly: boolean;
}

export function emptyState(): IState {
  return { jobs: {}, runs: {}, watchers: {}, notifications: [] };
}

export function emptyFilter(): IFilter {
  return { status: '', kind: '', notebook: '', query: '', pendingOnly: false };
}

/** The jobs of a full listing replace the known ones (a re-sync). */
export function withJobs(state: IState, jobs: IJob[]): IState {
  const byId: { [id: string]: IJob } = {};
  for (const job of jobs) {
    byId[job.id] = job;
  }
  const runs: { [jobId: string]: IRun[] } = {};
  for (const id of Object.keys(state.runs)) {
    if (byId[id]) {
      runs[id] = state.runs[id];
    }
  }
  return { ...state, jobs: byId, runs };
}

/**
 * A listing with the events that arrived while it was on its way: it was read before them,
 * so the listing alone would drop a job created meanwhile and bring back one deleted.
 */
export function withListing(state: IState, jobs: IJob[], arrived: IChangeEvent[]): IState {
  return arrived.reduce(applyChange, withJobs(state, jobs));
}

/** Jobs from a partial listing (one notebook's recalls) are added or replaced. */
export function mergeJobs(state: IState, jobs: IJob[]): IState {
  const byId = { ...state.jobs };
  for (const job of jobs) {
    byId[job.id] = job;
  }
  return { ...state, jobs: byId };
}

export function withRuns(state: IState, jobId: string, runs: IRun[]): IState {
  return { ...state, runs: { ...state.runs, [jobId]: runs } };
}

/**
 * Joins a live chunk to the output known so far: only the part of the chunk past what is
 * already there is added, so a chunk that overlaps the stored output is not repeated.
 */
export function appendOutput(
  current: string,
  text: string,
  offset: number | null | undefined
): string {
  if (offset === null || offset === undefined) {
    return current + text;
  }
  if (offset > current.length) {
    // A gap: the missing part is fetched with the run; keep what is known.
    return current;
  }
  const end = offset + text.length;
  return end <= current.length ? current : current + text.slice(current.length - offset);
}

/**
 * The output known after a live chunk. A run whose output was never loaded starts from a chunk
 * at offset 0 only; a later chunk leaves it unknown, so opening the run fetches it whole.
 */
function withChunk(
  known: string | undefined,
  text: string,
  offset: number | null | undefined
): string | undefined {
  if (known !== undefined) {
    return appendOutput(known, text, offset);
  }
  return offset ? undefined : text;
}

function upsertRun(runs: IRun[], run: IRun, text?: string | null, offset?: number | null): IRun[] {
  const index = runs.findIndex(r => r.id === run.id);
  const previous = index >= 0 ? runs[index] : undefined;
  const known = run.output ?? previous?.output;
  const output = text ? withChunk(known, text, offset) : known;
  const merged = { ...previous, ...run, output };
  if (index < 0) {
    return [merged, ...runs];
  }
  const copy = runs.slice();
  copy[index] = merged;
  return copy;
}

/**
 * Two views of one run's output, each a prefix of its whole output (chunks are only joined
 * where they touch): the longer one knows more.
 */
export function mergeOutput(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) {
    return a ?? b;
  }
  return b.length > a.length ? b : a;
}

/**
 * A run fetched over REST joined to what the change events already brought: events that
 * arrived while the request was under way may be newer than its answer.
 */
export function mergeRun(current: IRun | undefined, fetched: IRun): IRun {
  const output = mergeOutput(current?.output, fetched.output);
  if (current?.finished_at && !fetched.finished_at) {
    return { ...fetched, ...current, output };
  }
  return { ...current, ...fetched, output };
}

/** A fetched run history of a job, keeping the live runs it does not know yet. */
export function withFetchedRuns(state: IState, jobId: string, fetched: IRun[]): IState {
  const current = state.runs[jobId] ?? [];
  const ids = new Set(fetched.map(run => run.id));
  const newer = current.filter(run => !ids.has(run.id) && !run.finished_at);
  const merged = fetched.map(run =>
    mergeRun(
      current.find(r => r.id === run.id),
      run
    )
  );
  return withRuns(state, jobId, [...newer, ...merged]);
}

/** One fetched run (e.g. with its whole output) joined to its job's loaded history. */
export function withFetchedRun(state: IState, fetched: IRun): IState {
  const runs = state.runs[fetched.job_id] ?? [];
  const index = runs.findIndex(run => run.id === fetched.id);
  if (index < 0) {
    return withRuns(state, fetched.job_id, [fetched, ...runs]);
  }
  const copy = runs.slice();
  copy[index] = mergeRun(runs[index], fetched);
  return withRuns(state, fetched.job_id, copy);
}

/** Whether a run.output chunk could not be joined (a gap before it): the run needs a fetch. */
export function outputGap(state: IState, event: IChangeEvent): boolean {
  const run = event.run;
  if (event.type !== 'run.output' || !run || !event.text || !(run.job_id in state.runs)) {
    return false;
  }
  const known = state.runs[run.job_id].find(r => r.id === run.id)?.output;
  return known === undefined || known.length < (event.offset ?? 0) + event.text.length;
}

/** The state after one change event; events of other schemas or unknown types change nothing. */
export function applyChange(state: IState, event: IChangeEvent): IState {
  switch (event.type) {
    case 'job.created':
    case 'job.updated':
      return event.job ? mergeJobs(state, [event.job]) : state;
    case 'job.deleted': {
      const id = event.job?.id;
      if (!id || !(id in state.jobs)) {
        return state;
      }
      const jobs = { ...state.jobs };
      const runs = { ...state.runs };
      const watchers = { ...state.watchers };
      delete jobs[id];
      delete runs[id];
      delete watchers[id];
      return { ...state, jobs, runs, watchers };
    }
    case 'notification':
      return event.notification ? withNotification(state, event.notification) : state;
    case 'run.started':
    case 'run.output':
    case 'run.finished': {
      const run = event.run;
      // Only loaded histories are kept up to date: the others load in full when selected.
      if (!run || !(run.job_id in state.runs)) {
        return state;
      }
      const text = event.type === 'run.output' ? event.text : undefined;
      const runs = upsertRun(state.runs[run.job_id], run, text, event.offset);
      return withRuns(state, run.job_id, runs);
    }
    default:
      return state;
  }
}

/** A new notification first; one already known (the same id) is not added twice. */
export function withNotification(state: IState, notification: INotification): IState {
  if (state.notifications.some(known => known.id === notification.id)) {
    return state;
  }
  const notifications = [notification, ...state.notifications].slice(0, MAX_NOTIFICATIONS);
  return { ...state, notifications };
}

/** Watchers of a listing, keeping the last results already fetched (a listing has none). */
export function withWatchers(state: IState, watchers: IWatcher[]): IState {
  const byId: { [id: string]: IWatcher } = {};
  for (const watcher of watchers) {
    const known = state.watchers[watcher.watcher_id];
    byId[watcher.watcher_id] = { last_result: known?.last_result, ...watcher };
  }
  return { ...state, watchers: byId };
}

export function withWatcher(state: IState, watcher: IWatcher): IState {
  return { ...state, watchers: { ...state.watchers, [watcher.watcher_id]: watcher } };
}

/**
 * The watcher this event makes stale, to fetch again: one whose check ended (its last result)
 * or whose job was created or changed (its status).
 */
export function staleWatcher(state: IState, event: IChangeEvent): string | null {
  if (event.type === 'run.finished') {
    const id = event.run?.job_id;
    return id && (state.jobs[id]?.kind === 'watcher' || id in state.watchers) ? id : null;
  }
  const changed = event.type === 'job.created' || event.type === 'job.updated';
  return changed && event.job?.kind === 'watcher' ? event.job.id : null;
}

/** A check's result in one line, clipped: what a watcher last saw. */
export function describeCheck(
  check: ICheck | null | undefined,
  trans: TranslationBundle,
  limit = 160
): string {
  if (!check) {
    return trans.__('no check yet');
  }
  const result = check.result as { error?: unknown; data?: unknown } | null;
  const shown = !check.success && result?.error ? result.error : (result?.data ?? result);
  const text = typeof shown === 'string' ? shown : JSON.stringify(shown);
  const outcome = check.success ? trans.__('ok') : trans.__('failed');
  const line = `${outcome}: ${text ?? ''}`.replace(/\s+/g, ' ');
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/**
 * The instant a one-shot fires (or fired, or would have fired): its canonical form, an ISO
 * instant, whether or not it is still due; null for any other schedule or a form not read.
 */
export function oneShotInstant(job: IJob): string | null {
  if (job.schedule_kind !== 'once' || !job.canonical) {
    return null;
  }
  return Number.isNaN(Date.parse(job.canonical)) ? null : job.canonical;
}

/** The notebook a job belongs to: its kernel target's path, else its session. */
export function notebookOf(job: IJob): string | null {
  const path = job.target.path ?? job.session ?? null;
  return path && path.endsWith('.ipynb') ? path : null;
}

/** Notebooks with a pending recall (the ones the sidebar marks with a clock). */
export function notebooksWithPendingRecalls(state: IState): Set<string> {
  const paths = new Set<string>();
  for (const job of Object.values(state.jobs)) {
    if (job.kind === 'recall' && job.pending && job.session) {
      paths.add(job.session);
    }
  }
  return paths;
}

/** The notebooks the jobs belong to, for the notebook filter. */
export function jobNotebooks(state: IState): string[] {
  const paths = new Set<string>();
  for (const job of Object.values(state.jobs)) {
    const path = notebookOf(job);
    if (path) {
      paths.add(path);
    }
  }
  return [...paths].sort();
}

function fireOrder(job: IJob): number {
  return job.next_fire_at ? Date.parse(job.next_fire_at) : Number.MAX_SAFE_INTEGER;
}

function matchesFields(job: IJob, filter: IFilter, pending: Set<string>): boolean {
  const notebook = notebookOf(job);
  return (
    (!filter.status || job.status === filter.status) &&
    (!filter.kind || job.kind === filter.kind) &&
    (!filter.notebook || notebook === filter.notebook) &&
    (!filter.pendingOnly || (notebook !== null && pending.has(notebook)))
  );
}

/**
 * Jobs matching the filters ('' = any status, kind or notebook; optionally only the notebooks
 * with a pending recall) and the search text, soonest fire first.
 */
export function visibleJobs(state: IState, filter: IFilter, hideFinished = false): IJob[] {
  const query = filter.query.trim().toLowerCase();
  const pending = notebooksWithPendingRecalls(state);
  // A status chosen in the filter shows its jobs, finished or not.
  const hidden = hideFinished && !filter.status;
  return Object.values(state.jobs)
    .filter(job => !(hidden && FINISHED_STATUSES.has(job.status)))
    .filter(job => matchesFields(job, filter, pending))
    .filter(
      job =>
        !query ||
        [job.name, job.description, job.when, job.session ?? '', job.target.path ?? '']
          .join('\n')
          .toLowerCase()
          .includes(query)
    )
    .sort((a, b) => fireOrder(a) - fireOrder(b) || a.name.localeCompare(b.name));
}

/** Whether the filters include one the server does not apply (notebook, pending recall). */
export function hasNotebookFilters(filter: IFilter): boolean {
  return !!filter.notebook || filter.pendingOnly;
}

/**
 * The jobs (read from the server with the status, kind and search filters) that the notebook
 * filter and "only notebooks with a pending recall" also keep, as the list does.
 */
export function inNotebookFilters(state: IState, filter: IFilter, jobs: IJob[]): IJob[] {
  const pending = notebooksWithPendingRecalls(state);
  const notebooks = {
    ...emptyFilter(),
    notebook: filter.notebook,
    pendingOnly: filter.pendingOnly
  };
  return jobs.filter(job => matchesFields(job, notebooks, pending));
}

/** The pending recall of a notebook (recalls are keyed by their session, the notebook path). */
export function pendingRecall(state: IState, path: string): IJob | undefined {
  return Object.values(state.jobs).find(
    job => job.kind === 'recall' && job.pending && job.session === path
  );
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) {
    return '';
  }
  if (seconds < 1) {
    return `${Math.round(seconds * 1000)} ms`;
  }
  if (seconds < 60) {
    return `${seconds.toFixed(1)} s`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ${Math.round(seconds % 60)} s`;
  }
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The jobs that never fire again. */
export function finishedJobs(state: IState): IJob[] {
  return Object.values(state.jobs).filter(job => FINISHED_STATUSES.has(job.status));
}

/** What the status bar counts: jobs with a run going, and those waiting for their next fire. */
export function jobCounts(state: IState): { running: number; pending: number } {
  let running = 0;
  let pending = 0;
  for (const job of Object.values(state.jobs)) {
    if (job.last_status === 'running') {
      running++;
    } else if (job.status === 'active' && job.pending) {
      pending++;
    }
  }
  return { running, pending };
}
