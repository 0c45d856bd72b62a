// The agent's backups, newest first, each with view, XML download and delete. Downloads fetch the XML
// exactly as stored (format=xml) so the file is byte for byte what the firewall sent.
import { useState } from 'react';
import { apiText, saveFile } from '../../api/client';
import { formatBytes, formatDateTime } from '../../ui/format';
import { useActionError } from '../../ui/use-action-error';
import { Allowed } from '../../auth/access';
import { ActionsHeader, ConfirmButton, Empty, ErrorBanner, RelativeTime } from '../../ui/widgets';
import { backupFileName, backupsPath, shortHash, type ConfigBackup } from './backup-types';
import { TableFrame } from '../../ui/table-frame';

interface ListProps {
  agentId: string;
  agentName: string;
  backups: readonly ConfigBackup[];
  viewingId: number | undefined;
  onView: (id: number | undefined) => void;
  onDelete: (backup: ConfigBackup) => Promise<void>;
}

export function BackupList({ agentId, agentName, backups, viewingId, onView, onDelete }: ListProps) {
  const { error, guard } = useActionError();
  if (backups.length === 0) return <Empty>No backups yet. Take one to keep the firewall's configuration on this server.</Empty>;
  return (
    <>
      <ErrorBanner error={error} />
      <TableFrame label="Backups">
        <table className="backup-table">
          <thead>
            <tr>
              <th>Taken</th>
              <th className="num">Size</th>
              <th>SHA-256</th>
              <th className="num">ID</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {backups.map((backup, index) => (
              <tr key={backup.id} data-testid="backup-row" className={backup.id === viewingId ? 'backup-viewing' : undefined}>
                <td>
                  {formatDateTime(backup.created_at)}{' '}
                  <span className="muted">
                    (<RelativeTime iso={backup.created_at} />)
                  </span>
                  {index === 0 && <span className="badge badge-good backup-latest">latest</span>}
                </td>
                <td className="num">{formatBytes(backup.size)}</td>
                <td>
                  <abbr className="mono" title={backup.hash}>
                    {shortHash(backup.hash)}
                  </abbr>
                </td>
                <td className="num mono">#{backup.id}</td>
                <td className="backup-actions">
                  <button type="button" aria-pressed={backup.id === viewingId} onClick={() => onView(backup.id === viewingId ? undefined : backup.id)}>
                    {backup.id === viewingId ? 'Hide' : 'View'}
                  </button>
                  <DownloadXmlButton agentId={agentId} agentName={agentName} backup={backup} guard={guard} />
                  <Allowed need="write">
                    <ConfirmButton label="Delete" question={`Delete backup #${backup.id}?`} busyLabel="Deleting…" onConfirm={() => guard(() => onDelete(backup))} />
                  </Allowed>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableFrame>
      {backups.length >= 1000 && <p className="muted">Showing the newest 1000 backups.</p>}
    </>
  );
}

function DownloadXmlButton({ agentId, agentName, backup, guard }: { agentId: string; agentName: string; backup: ConfigBackup; guard: (action: () => Promise<void>) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const download = () =>
    guard(async () => {
      setBusy(true);
      try {
        const xml = await apiText(backupsPath(agentId, `/${backup.id}`), { query: { format: 'xml' } });
        saveFile(backupFileName(agentName, backup.created_at), xml, 'application/xml');
      } finally {
        setBusy(false);
      }
    });
  return (
    <button type="button" disabled={busy} onClick={() => void download()} aria-label={`Download backup #${backup.id} as XML`}>
      {busy ? 'Downloading…' : 'Download XML'}
    </button>
  );
}
