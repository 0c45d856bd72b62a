// One backup's configuration as text. The XML comes from the agent, so it is only ever shown as text in
// a <pre>; very large configurations are cut on screen (the download always holds all of it).
import { api, saveFile } from '../../api/client';
import { formatBytes, formatDateTime } from '../../ui/format';
import { useResource } from '../../use-resource';
import { ErrorBanner, Loading } from '../../ui/widgets';
import { backupFileName, backupsPath, type ConfigBackupWithContent } from './backup-types';

/** More than this many characters makes the page sluggish; the rest is in the download. */
const SHOWN_CHARS = 2_000_000;

export function BackupViewer({ agentId, agentName, backupId, onClose }: { agentId: string; agentName: string; backupId: number; onClose: () => void }) {
  const backup = useResource((signal) => api<ConfigBackupWithContent>(backupsPath(agentId, `/${backupId}`), { signal }), [agentId, backupId]);
  const data = backup.data?.id === backupId ? backup.data : undefined;
  const content = data ? (typeof data.content === 'string' ? data.content : '') : '';
  return (
    <section className="card backup-viewer" aria-labelledby="backup-viewer-title">
      <div className="row backup-viewer-head">
        <h2 id="backup-viewer-title">Backup #{backupId}</h2>
        {data && <span className="muted">{formatDateTime(data.created_at)}</span>}
        <span className="spacer" />
        <button type="button" disabled={!data} onClick={() => data && saveFile(backupFileName(agentName, data.created_at), content, 'application/xml')}>
          Download XML
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorBanner error={backup.error} />
      {!data && !backup.error && <Loading />}
      {data && (
        <>
          <dl className="facts">
            <dt>Size</dt>
            <dd>{formatBytes(data.size)}</dd>
            <dt>SHA-256</dt>
            <dd className="mono">{data.hash}</dd>
          </dl>
          {content.length > SHOWN_CHARS && (
            <p className="banner banner-warn">The configuration is very large: only its beginning is shown. Download it to see all of it.</p>
          )}
          <pre className="backup-content" aria-label={`Configuration of backup #${backupId}`} tabIndex={0}>
            {content.length > SHOWN_CHARS ? content.slice(0, SHOWN_CHARS) : content}
          </pre>
        </>
      )}
    </section>
  );
}
