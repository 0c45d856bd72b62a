// Configuration backups (contract §7): taking one from the agent over its WebSocket, deduplicated by the
// SHA-256 of the content per agent; reads, deletion and the line diff between two backups. Access is
// the agent's: an agent outside the caller's scope, and a backup of another agent, are "not found".
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import { backupResultSchema } from '../agent-hub/agent-protocol.js';
import type { Agent, AgentService } from '../agents/agents.service.js';
import type { Caller } from '../auth/caller.js';
import { diffBackups, MAX_DIFF_CHANGED_LINES, type LineDiff } from './backup-diff.js';
import * as repo from './backups.repo.js';

export type { BackupMeta, BackupRow } from './backups.repo.js';

/** How long the agent may take to export its configuration. */
export const BACKUP_TIMEOUT_MS = 120_000;
/** The largest configuration stored (UTF-8 bytes); a larger answer is refused as an agent error. */
export const MAX_BACKUP_BYTES = 16 * 1024 * 1024;
/** The largest pair of backups (together, UTF-8 bytes) the diff reads. */
export const MAX_DIFF_BYTES = 20 * 1024 * 1024;

const backupNotFound = () => new AppError('NOT_FOUND', 'Backup not found');

/**
 * Configuration backups are a firewall's config.xml (the spec's backup `content`): a hypervisor or a
 * Windows machine has none, and what it answered would be stored where no page shows it. An agent not
 * registered yet (no platform) is let through; it is checked again when the backup is taken.
 */
export function assertBacksUpConfiguration(agent: Pick<Agent, 'platform' | 'hostname'>, path = 'agent_id'): void {
  if (agent.platform === null || agent.platform === 'freebsd') return;
  const message = `configuration backups are for firewalls (platform freebsd); ${agent.hostname} is a ${agent.platform} agent`;
  throw new AppError('VALIDATION_ERROR', `${path}: ${message}`, { details: [{ path, message }] });
}

export class BackupService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly agents: AgentService,
    private readonly commander: AgentCommander,
    private readonly clock: Clock,
  ) {}

  /** Asks the agent for its configuration and stores it unless the agent already has that content. */
  async create(caller: Caller, agentId: string): Promise<{ backup: repo.BackupMeta; created: boolean }> {
    assertBacksUpConfiguration(await this.agents.get(caller, agentId));
    const answer = await this.commander.request(agentId, 'backup', {}, BACKUP_TIMEOUT_MS);
    const content = checkedContent(answer);
    const bytes = Buffer.from(content, 'utf8');
    const values = {
      agent_id: agentId,
      hash: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      content,
      created_at: this.clock.now(),
    };
    // The second round covers an equal backup deleted between our insert and our read.
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await repo.insertBackupIfNew(this.db, values);
      if (inserted === null) throw new AppError('NOT_FOUND', 'Agent not found');
      if (inserted) return { backup: inserted, created: true };
      const existing = await repo.findBackupByHash(this.db, agentId, values.hash);
      if (existing) return { backup: existing, created: false };
    }
    throw new AppError('CONFLICT', 'The backup changed concurrently; try again');
  }

  async list(caller: Caller, agentId: string, page: PageRequest): Promise<Page<repo.BackupMeta>> {
    await this.agents.get(caller, agentId);
    return repo.listBackups(this.db, agentId, page);
  }

  /** One backup with its content (`latest`: the newest), and its agent (for the download's file name). */
  async get(caller: Caller, agentId: string, ref: number | 'latest'): Promise<{ agent: Agent; backup: repo.BackupRow }> {
    const agent = await this.agents.get(caller, agentId);
    const backup = ref === 'latest' ? await repo.findLatestBackup(this.db, agentId) : await repo.findBackup(this.db, agentId, ref);
    if (!backup) throw ref === 'latest' ? new AppError('NOT_FOUND', 'The agent has no backup yet') : backupNotFound();
    return { agent, backup };
  }

  async delete(caller: Caller, agentId: string, id: number): Promise<void> {
    await this.agents.get(caller, agentId);
    if (!(await repo.deleteBackup(this.db, agentId, id))) throw backupNotFound();
  }

  /** The unified diff from backup `a` to backup `b`, both of this agent. */
  async diff(caller: Caller, agentId: string, a: number, b: number): Promise<LineDiff & { a: repo.BackupMeta; b: repo.BackupMeta }> {
    await this.agents.get(caller, agentId);
    const metas = await repo.findBackupMetas(this.db, agentId, [a, b]);
    const metaA = metas.find((m) => m.id === a);
    const metaB = metas.find((m) => m.id === b);
    if (!metaA || !metaB) throw backupNotFound();
    const total = metaA.size + (a === b ? 0 : metaB.size);
    if (total > MAX_DIFF_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The two backups hold ${total} bytes together; the diff reads at most ${MAX_DIFF_BYTES}`);
    }
    const contents = await repo.findContents(this.db, agentId, [a, b]);
    const contentA = contents.get(a);
    const contentB = contents.get(b);
    if (contentA === undefined || contentB === undefined) throw backupNotFound(); // deleted meanwhile
    const result = diffBackups({ ...metaA, content: contentA }, { ...metaB, content: contentB });
    if (!result) {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `The backups differ in more than ${MAX_DIFF_CHANGED_LINES} lines, too many to diff here; download both with format=xml to compare them`,
      );
    }
    return { a: metaA, b: metaB, ...result };
  }
}

/** The configuration text of the agent's answer; anything unusable is the agent's error (502). */
function checkedContent(answer: unknown): string {
  const parsed = backupResultSchema.safeParse(answer);
  if (!parsed.success) throw new AppError('AGENT_ERROR', 'agent sent no config content');
  const { content } = parsed.data;
  if (Buffer.byteLength(content, 'utf8') > MAX_BACKUP_BYTES) {
    throw new AppError('AGENT_ERROR', `agent sent a config larger than ${MAX_BACKUP_BYTES} bytes`);
  }
  // PostgreSQL text cannot hold NUL, and no XML document contains one.
  if (content.includes('\u0000')) throw new AppError('AGENT_ERROR', 'agent sent a config containing a NUL character');
  if (content.length === 0) throw new AppError('AGENT_ERROR', 'agent sent an empty config');
  return content;
}
