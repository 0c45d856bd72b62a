// SKELETON (issue 31, being built): alert rules — CRUD with scope checks and channel checks.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';

export interface AlertRuleHooks {
  /** Called after any rule is created, changed or deleted, so evaluators reload their rules. */
  changed(): void;
  /** Called before a rule is deleted: resolves its open alerts by hand (`by` = the caller's name). */
  beforeDelete(ruleId: number, by: string): Promise<void>;
}

export class AlertRuleService {
  constructor(
    readonly db: Kysely<Database>,
    readonly clock: Clock,
    readonly hooks: AlertRuleHooks,
  ) {}
}
