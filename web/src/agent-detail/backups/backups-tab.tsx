// The firewall's configuration backups: take one now, list them (newest first, a page at a time), read
// or download one, delete, and compare any two of those loaded; content is fetched only when asked for.
import { useState } from 'react';
import { api } from '../../api/client';
import { Allowed } from '../../auth/access';
import { usePagedList } from '../../use-paged-list';
import { ErrorBanner, Loading, LoadMore } from '../../ui/widgets';
import type { TabProps } from '../tab-props';
import { BackupDiff } from './backup-diff';
import { BackupList } from './backup-list';
import { backupsPath, type ConfigBackup } from './backup-types';
import { BackupViewer } from './backup-viewer';
import { TakeBackup } from './take-backup';
import './backups.css';

const PAGE = 50;

export function BackupsTab({ agent }: TabProps) {
  const backups = usePagedList<ConfigBackup>(backupsPath(agent.id), {}, { pageSize: PAGE });
  const [viewingId, setViewingId] = useState<number>();
  const list = newestFirst(backups.items ?? []);
  const viewing = list.some((b) => b.id === viewingId) ? viewingId : undefined;

  const remove = async (backup: ConfigBackup) => {
    await api(backupsPath(agent.id, `/${backup.id}`), { method: 'DELETE' });
    if (backup.id === viewingId) setViewingId(undefined);
    backups.reload();
  };

  return (
    <div className="backups-tab">
      <Allowed need="write">
        <TakeBackup agentId={agent.id} connected={agent.connected} onTaken={backups.reload} />
      </Allowed>
      <h2>Backups</h2>
      <ErrorBanner error={backups.error} />
      {backups.items ? (
        <BackupList agentId={agent.id} agentName={agent.name} backups={list} viewingId={viewing} onView={setViewingId} onDelete={remove} />
      ) : (
        !backups.error && <Loading />
      )}
      <LoadMore list={backups} />
      {viewing !== undefined && <BackupViewer agentId={agent.id} agentName={agent.name} backupId={viewing} onClose={() => setViewingId(undefined)} />}
      {backups.items && <BackupDiff agentId={agent.id} agentName={agent.name} backups={list} />}
    </div>
  );
}

/** The server already sorts; sorting again keeps "the two newest" right whatever order arrives. */
function newestFirst(backups: readonly ConfigBackup[]): ConfigBackup[] {
  return [...backups].sort((x, y) => Date.parse(y.created_at) - Date.parse(x.created_at) || y.id - x.id);
}
