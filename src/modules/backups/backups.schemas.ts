// Configuration backup request and response shapes (contract §7).
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { newestFirstList, pageQuery } from '../../http/pagination.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import type { BackupMeta } from './backups.repo.js';

/** Backup ids are bigint identities; anything else in their place is a 400 (so is `latest` outside GET). */
export const backupIdSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const backupParams = z.object({ id: agentIdSchema, bid: backupIdSchema });

export const BACKUP_LIST = newestFirstList(50);
export const listBackupsQuery = z.object(pageQuery(BACKUP_LIST));

export const backupFormatQuery = z.object({
  format: z.enum(['json', 'xml']).default('json').describe('`xml`: the configuration itself as a download; default `json`'),
});

export const diffQuery = z.object({
  a: backupIdSchema.describe('The backup the diff starts from (its lines that `b` lacks are "removed")'),
  b: backupIdSchema.describe('The backup the diff leads to (its lines that `a` lacks are "added")'),
  format: z.enum(['json', 'text']).default('json').describe('`text`: only the unified diff, as text/plain; default `json`'),
});

export const backupSchema = z
  .object({
    id: z.number().int(),
    agent_id: z.string(),
    hash: z.string().describe('SHA-256 (hex) of the configuration\'s UTF-8 bytes as the agent sent them'),
    size: z.number().int().describe('Bytes (UTF-8)'),
    created_at: timestampSchema,
  })
  .meta({ id: 'ConfigBackup' });

export const createdBackupSchema = backupSchema
  .extend({ created: z.boolean().describe('false: the agent already had a backup with this hash, which is returned') })
  .meta({ id: 'ConfigBackupCreated' });

export const backupWithContentSchema = backupSchema
  .extend({ content: z.string().describe('The configuration XML exactly as the agent sent it') })
  .meta({ id: 'ConfigBackupWithContent' });

export const backupDiffSchema = z
  .object({
    a: backupSchema,
    b: backupSchema,
    added: z.number().int().describe('Lines only in `b`'),
    removed: z.number().int().describe('Lines only in `a`'),
    diff: z.string().describe('Unified diff from `a` to `b` (3 lines of context); "" when the contents are equal'),
  })
  .meta({ id: 'ConfigBackupDiff' });

export const deletedSchema = z.object({ deleted: z.literal(true) });

export function toBackupDto(b: BackupMeta): z.infer<typeof backupSchema> {
  return { id: b.id, agent_id: b.agent_id, hash: b.hash, size: b.size, created_at: toTimestamp(b.created_at) };
}

/** `<agent name or id>-<created_at as 20260501T100000Z>-<id>.xml`, in characters safe in any file system. */
export function downloadFileName(agent: { id: string; name: string }, backup: BackupMeta): string {
  const name = agent.name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+|_+$/g, '');
  const time = backup.created_at.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
  return `${name || agent.id}-${time}-${backup.id}.xml`;
}
