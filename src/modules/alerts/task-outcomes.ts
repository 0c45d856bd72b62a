// Alert rules on task outcomes (issue 31): a run that ends in one of a rule's statuses (error,
// completed_with_warning) fires an alert labelled with its task; a later run of the same task that
// completes resolves it. Evaluated when the run closes, off the runner's path (queued, never thrown).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import type { FinishedRun } from '../tasks/task-runner.js';
import { enabledRules, ruleCovers } from './active-rules.repo.js';
import type { AlertEngine } from './alert-engine.js';
import { findOpenAlert } from './alerts.repo.js';
import { utc } from './periodic-conditions.js';
import { logFailure } from '../../db/db-errors.js';

export class TaskOutcomes {
  #queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly engine: AlertEngine,
  ) {}

  finished(run: FinishedRun): void {
    this.#queue = this.#queue.then(() => this.#evaluate(run)).catch((err: unknown) => logFailure(this.logger, err, { task_id: run.taskId }, 'task outcome not evaluated for alerts'));
  }

  idle(): Promise<void> {
    return this.#queue;
  }

  async #evaluate(run: FinishedRun): Promise<void> {
    const rules = await enabledRules(this.db, 'task_failed');
    if (rules.length === 0) return;
    const agent = await this.db.selectFrom('agents').select(['id', 'customer_id']).where('id', '=', run.agentId).executeTakeFirst();
    if (!agent) return;
    const label = `task ${run.taskId}`;
    for (const rule of rules.filter((r) => ruleCovers(r, agent))) {
      if ((rule.params.statuses as readonly string[]).includes(run.status)) {
        const outcome = run.status === 'error' ? `failed${run.error ? `: ${run.error}` : ''}` : 'completed with a warning (the agent did not come back in time)';
        await this.engine.fire(rule, [
          { agentId: run.agentId, label, summary: `Task "${run.name}" (${run.kind}) ${outcome}, at ${utc(run.finishedAt)}`, value: null, threshold: null, since: run.finishedAt },
        ]);
      } else if (run.status === 'completed') {
        const open = await findOpenAlert(this.db, rule.id, run.agentId, label);
        if (open) await this.engine.resolve(rule.id, [open]);
      }
    }
  }
}
