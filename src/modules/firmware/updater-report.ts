// The on-device updater's reports (issue 30): the latest one is kept on the agent row and shown as the
// agent's `updater`. A report that the device still runs the old version (rolled back, rollback failed,
// refused) sets the update request flag again: the new binary's own heartbeats may have cleared it
// during the health check, and the console must not show "nothing pending" while the old one runs.
import type { Kysely } from 'kysely';
import type { Database, UpdaterState } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Caller } from '../auth/caller.js';
import type { AgentService } from '../agents/agents.service.js';
import * as repo from './firmware.repo.js';

export interface UpdaterReport {
  state: UpdaterState;
  version?: string | undefined;
  /** Accepted (the updater names the binary it means) but not kept: the version and message say enough. */
  sha256?: string | undefined;
  message?: string | undefined;
}

/** States after which the device runs its old binary while an update is still wanted. */
const STILL_PENDING: ReadonlySet<UpdaterState> = new Set(['rolled_back', 'rollback_failed', 'refused']);

export class UpdaterReports {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly agents: AgentService,
    private readonly clock: Clock,
  ) {}

  async record(caller: Caller, agentId: string, report: UpdaterReport): Promise<void> {
    const agent = await this.agents.get(caller, agentId); // 404 unknown or outside the key's customer
    await repo.saveUpdaterReport(
      this.db,
      agent.id,
      { state: report.state, version: report.version ?? null, message: report.message ?? null, reportedAt: this.clock.now() },
      STILL_PENDING.has(report.state),
    );
  }
}
