// Maintenance windows (issue 31): CRUD with the scope rules of alerts/alert-scope.ts (global, one
// customer, one agent; a scoped key sees global windows read-only), and whether a window covers an
// agent at a time, for the alert engine: alerts that begin inside one are recorded as suppressed.
// A window is one-off (starts_at, ends_at) or recurring (five-field UTC cron, duration_minutes), never
// both; active_now and next_start are computed with the injected clock (window-timing.ts).
import type { Kysely } from 'kysely';
import { isForeignKeyViolation } from '../../db/db-errors.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { invalidPosition, pageOfSorted, type Page, type PageRequest } from '../../platform/paging.js';
import { assertChangeable, canSee, resolveScope } from '../alerts/alert-scope.js';
import { scopeOf, type Caller } from '../auth/caller.js';
import { cronProblem } from '../tasks/cron.js';
import * as repo from './maintenance-windows.repo.js';
import { coversAt, matcherAt, nextStart, type CoveringWindow, type WindowMatcher } from './window-timing.js';

export type { CoveringWindow, WindowMatcher } from './window-timing.js';

/** A stored window and its state at the clock's now. */
export type MaintenanceWindow = repo.WindowRow & { active_now: boolean; next_start: Date | null };

export interface MaintenanceWindowFilter {
  customerId?: number | undefined;
  agentId?: string | undefined;
  /** Only windows open (true) or not open (false) now. */
  active?: boolean | undefined;
}

/** What POST and PUT take: the whole window (PUT replaces every field). */
export interface MaintenanceWindowInput {
  name: string;
  customer_id?: number | null | undefined;
  agent_id?: string | null | undefined;
  starts_at?: Date | null | undefined;
  ends_at?: Date | null | undefined;
  cron?: string | null | undefined;
  duration_minutes?: number | null | undefined;
}

export const MAX_WINDOW_MINUTES = 10_080;
const WHAT = 'Maintenance window';
const FORMS = 'give starts_at and ends_at (one-off) or cron and duration_minutes (recurring)';

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`, { details: [{ path, message }] });

export class MaintenanceWindowService {
  constructor(
    readonly db: Kysely<Database>,
    readonly clock: Clock,
  ) {}

  /** Windows the caller can see, by id; `active` is decided at the clock's now. */
  async list(caller: Caller, filter: MaintenanceWindowFilter, page: PageRequest): Promise<Page<MaintenanceWindow>> {
    if (page.after !== null && (page.after.length !== 1 || !Number.isSafeInteger(page.after[0]))) throw invalidPosition();
    const now = this.clock.now();
    const rows = await repo.listWindows(this.db, { scope: scopeOf(caller), customerId: filter.customerId, agentId: filter.agentId });
    const windows = rows.map((w) => withState(w, now)).filter((w) => filter.active === undefined || w.active_now === filter.active);
    return pageOfSorted(windows, page, (w) => [w.id], (a, b) => (a[0] as number) - (b[0] as number));
  }

  async get(caller: Caller, id: number): Promise<MaintenanceWindow> {
    const row = await repo.findWindow(this.db, id);
    if (!row || !canSee(caller, row)) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    return withState(row, this.clock.now());
  }

  async create(caller: Caller, input: MaintenanceWindowInput): Promise<MaintenanceWindow> {
    const values = await this.prepare(caller, input);
    const id = await this.write(() => repo.insertWindow(this.db, values, this.clock.now()));
    return this.get(caller, id);
  }

  /** Replaces the whole window; 403 for a global window and a scoped key. */
  async update(caller: Caller, id: number, input: MaintenanceWindowInput): Promise<MaintenanceWindow> {
    const existing = await repo.findWindow(this.db, id);
    if (!existing) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    assertChangeable(caller, existing, WHAT);
    const values = await this.prepare(caller, input);
    if (!(await this.write(() => repo.updateWindow(this.db, id, values, this.clock.now())))) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    return this.get(caller, id);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    const existing = await repo.findWindow(this.db, id);
    if (!existing) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    assertChangeable(caller, existing, WHAT);
    await repo.deleteWindow(this.db, id);
  }

  /** The window (agent's own, its customer's, or global) that covers `at` for this agent, or null. */
  async activeWindow(agent: { id: string; customer_id: number | null }, at: Date): Promise<CoveringWindow | null> {
    return matcherAt(await repo.windowTimingsFor(this.db, agent), at).covers(agent);
  }

  /** Every window read once (one query), decided at `at`: for asking about many agents in one pass. */
  async coveringWindows(at: Date): Promise<WindowMatcher> {
    return matcherAt(await repo.allWindowTimings(this.db), at);
  }

  /** Every window read once, to be decided at many times (alerts that began at different times). */
  async snapshot(): Promise<(at: Date) => WindowMatcher> {
    const windows = await repo.allWindowTimings(this.db);
    return (at) => matcherAt(windows, at);
  }

  /** Checks the timing form and the scope; throws the first problem found. */
  private async prepare(caller: Caller, input: MaintenanceWindowInput): Promise<repo.WindowValues> {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) throw invalid('name', 'must be 1 to 100 characters');
    const timing = checkTiming(input);
    const scope = await resolveScope(this.db, caller, input, WHAT);
    return { name, customer_id: scope.customer_id, agent_id: scope.agent_id, ...timing };
  }

  private async write<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (isForeignKeyViolation(err)) throw new AppError('CONFLICT', 'The customer or agent of the window was deleted meanwhile; check and send it again');
      throw err;
    }
  }
}

function withState(w: repo.WindowRow, now: Date): MaintenanceWindow {
  return { ...w, active_now: coversAt(w, now), next_start: nextStart(w, now) };
}

/** Exactly one form, complete and sensible: 400 naming the field otherwise. */
function checkTiming(input: MaintenanceWindowInput): Pick<repo.WindowValues, 'starts_at' | 'ends_at' | 'cron' | 'duration_minutes'> {
  const startsAt = input.starts_at ?? null;
  const endsAt = input.ends_at ?? null;
  const cron = input.cron ?? null;
  const minutes = input.duration_minutes ?? null;
  const oneOff = startsAt !== null || endsAt !== null;
  const recurring = cron !== null || minutes !== null;
  if (oneOff && recurring) throw invalid(cron !== null ? 'cron' : 'duration_minutes', `${FORMS}, not both`);
  if (!oneOff && !recurring) throw invalid('starts_at', FORMS);
  if (oneOff) {
    if (startsAt === null) throw invalid('starts_at', 'required with ends_at');
    if (endsAt === null) throw invalid('ends_at', 'required with starts_at');
    if (endsAt.getTime() <= startsAt.getTime()) throw invalid('ends_at', 'must be after starts_at');
    return { starts_at: startsAt, ends_at: endsAt, cron: null, duration_minutes: null };
  }
  if (cron === null) throw invalid('cron', 'required with duration_minutes');
  if (minutes === null) throw invalid('duration_minutes', 'required with cron');
  const problem = cronProblem(cron);
  if (problem) throw invalid('cron', problem);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_WINDOW_MINUTES) throw invalid('duration_minutes', `must be 1 to ${MAX_WINDOW_MINUTES} minutes`);
  return { starts_at: null, ends_at: null, cron: cron.trim(), duration_minutes: minutes };
}
