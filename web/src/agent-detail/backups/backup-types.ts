// The backup shapes of the API (contract §7) and the small helpers the backup components share: paths,
// short hashes and download file names built from names the agent chose (so they are sanitised).
import type { ApiBody, ApiItem } from '../../api/api-types';

export type ConfigBackup = ApiItem<'/agents/{id}/backups'>;
export type ConfigBackupWithContent = ApiBody<'/agents/{id}/backups/{bid}'>;
export type ConfigBackupDiff = ApiBody<'/agents/{id}/backups/diff'>;

export function backupsPath(agentId: string, rest = ''): string {
  return `/agents/${encodeURIComponent(agentId)}/backups${rest}`;
}

export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

/** Only characters every file system accepts: the agent's name is chosen by whoever set it up. */
export function safeFilePart(text: string, fallback: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._-]+/, '').slice(0, 80);
  return cleaned || fallback;
}

/** `<agent name>-<time>.xml`, the time without colons (Windows forbids them in file names). */
export function backupFileName(agentName: string, createdAt: string): string {
  const time = createdAt.replace(/\.\d+(?=Z$)/, '').replace(/:/g, '-');
  return `${safeFilePart(agentName, 'agent')}-${safeFilePart(time, 'backup')}.xml`;
}
