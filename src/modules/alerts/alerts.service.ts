// Alerts as the API serves them (issue 31): lists and the badge's count within the caller's customer
// scope (others' alerts are "not found"), acknowledging (stops reminders) and resolving by hand (the
// resolution is notified like an automatic one, naming who and why).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { actorOf, assertInScope, scopeOf, type Caller } from '../auth/caller.js';
import type { AlertEngine } from './alert-engine.js';
import * as repo from './alerts.repo.js';

export type AlertListFilter = Omit<repo.AlertFilter, 'scope'>;

export class AlertService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly engine: AlertEngine,
  ) {}

  list(caller: Caller, filter: AlertListFilter, page: PageRequest): Promise<Page<repo.AlertView>> {
    return repo.listAlerts(this.db, { ...filter, scope: scopeOf(caller) }, page);
  }

  async get(caller: Caller, id: number): Promise<repo.AlertView> {
    const alert = await repo.findAlertView(this.db, id);
    if (!alert) throw new AppError('NOT_FOUND', 'Alert not found');
    assertInScope(caller, alert.customer_id, 'Alert');
    return alert;
  }

  async summary(caller: Caller): Promise<{ open: number; firing: number; acknowledged: number }> {
    const counts = await repo.alertSummary(this.db, scopeOf(caller));
    return { open: counts.firing + counts.acknowledged, ...counts };
  }

  /** Open alerts of a rule (to resolve them before it is deleted). */
  async openOfRule(ruleId: number): Promise<repo.AlertRow[]> {
    return [...(await repo.openAlertsOfRule(this.db, ruleId)).values()];
  }

  async acknowledge(caller: Caller, id: number, comment: string | null): Promise<repo.AlertView> {
    const alert = await this.get(caller, id);
    if (alert.state !== 'firing') throw new AppError('CONFLICT', `The alert is ${alert.state}; only a firing alert can be acknowledged`);
    const done = await repo.acknowledgeAlert(this.db, id, this.clock.now(), actorOf(caller).actor, comment);
    if (!done) throw new AppError('CONFLICT', 'The alert changed meanwhile; reload it');
    return this.get(caller, id);
  }

  /**
   * Acknowledges several firing alerts at once (31 open alerts were 31 clicks). Each is handled as the
   * single acknowledgement is; an alert out of scope, unknown, or no longer firing is reported, not fatal.
   */
  async acknowledgeMany(caller: Caller, ids: readonly number[], comment: string | null): Promise<{ acknowledged: number[]; skipped: Array<{ id: number; reason: string }> }> {
    const acknowledged: number[] = [];
    const skipped: Array<{ id: number; reason: string }> = [];
    for (const id of new Set(ids)) {
      try {
        await this.acknowledge(caller, id, comment);
        acknowledged.push(id);
      } catch (err) {
        if (!(err instanceof AppError) || (err.code !== 'NOT_FOUND' && err.code !== 'CONFLICT')) throw err;
        skipped.push({ id, reason: err.message });
      }
    }
    return { acknowledged, skipped };
  }

  async resolve(caller: Caller, id: number, comment: string | null): Promise<repo.AlertView> {
    const alert = await this.get(caller, id);
    if (alert.state === 'resolved') throw new AppError('CONFLICT', 'The alert is already resolved');
    const [done] = await this.engine.resolve(alert.rule_id, [alert], actorOf(caller).actor, comment);
    if (!done) throw new AppError('CONFLICT', 'The alert changed meanwhile; reload it');
    return this.get(caller, id);
  }
}
