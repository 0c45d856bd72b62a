// Every device session (a shell, a download, an upload) as a row and two audit entries: who, which
// agent, what (the path, the shell), when it ended and why, its bytes and, for a transfer, the SHA-256.
// The audit entries are written whatever happens to the session; the row keeps the recording.
import type { Kysely } from 'kysely';
import type { Database, DeviceSessionKind } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { Agent } from '../agents/agents.service.js';
import type { AuditService } from '../audit/audit.service.js';
import { actorOf, type Caller } from '../auth/caller.js';
import * as repo from './device-sessions.repo.js';

export interface SessionStart {
  id: string;
  kind: DeviceSessionKind;
  agent: Agent;
  caller: Caller;
  /** The client's address, for the audit log. */
  ip: string;
  /** What the session is about, for the audit log: the shell, the path. */
  subject: string;
}

export interface SessionOutcome {
  /** closed, exited, idle, time-limit, agent-gone, server-stopping, refused, failed: … */
  reason: string;
  bytesIn: number;
  bytesOut: number;
  /** The status the audit entry shows: 200 for a transfer that completed, the close code of a shell. */
  status: number;
  sha256?: string | null;
  recording?: { sha256: string; bytes: number } | null;
}

export class DeviceSessionLog {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Records the start; the returned function records the end (once). */
  async start(session: SessionStart): Promise<(outcome: SessionOutcome) => Promise<void>> {
    const { id, kind, agent, caller, ip, subject } = session;
    const startedAt = this.clock.now();
    await repo.insertSession(this.db, {
      id,
      kind,
      agent_id: agent.id,
      agent_name: agent.name,
      customer_id: agent.customer_id,
      user_id: caller.kind === 'user' ? caller.userId : null,
      actor: actorOf(caller).actor,
      started_at: startedAt,
    });
    const path = `/api/v1/agents/${agent.id}/${kind};session=${id}`;
    const label = `agent ${agent.name}: ${kind} ${subject}`.slice(0, 200);
    const entry = (action: string, suffix: string, status: number) => ({
      ...actorOf(caller),
      action,
      method: kind === 'upload' ? 'PUT' : 'GET',
      path: `${path}${suffix}`.slice(0, 2000),
      status_code: status,
      ip,
      target: { label, customerId: agent.customer_id },
    });
    const failed = (err: unknown) => this.logger.error({ err, sessionId: id }, 'device session audit entry failed');
    this.audit.recordSoon(entry(`device.${kind}.start`, '', 101), failed);
    let ended = false;
    return async (outcome) => {
      if (ended) return;
      ended = true;
      const endedAt = this.clock.now();
      const seconds = Math.round((endedAt.getTime() - startedAt.getTime()) / 1000);
      const sha = outcome.sha256 ? `;sha256=${outcome.sha256}` : '';
      const suffix = `;duration_s=${seconds};reason=${outcome.reason};bytes_in=${outcome.bytesIn};bytes_out=${outcome.bytesOut}${sha}`;
      this.audit.recordSoon(entry(`device.${kind}.end`, suffix, outcome.status), failed);
      await repo
        .endSession(this.db, id, {
          ended_at: endedAt,
          end_reason: outcome.reason.slice(0, 500),
          bytes_in: outcome.bytesIn,
          bytes_out: outcome.bytesOut,
          recording_sha256: outcome.recording?.sha256 ?? null,
          recording_bytes: outcome.recording?.bytes ?? null,
        })
        .catch((err: unknown) => this.logger.error({ err, sessionId: id }, 'could not record the end of a device session'));
    };
  }
}
