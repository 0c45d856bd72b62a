// Stored firmware per platform. The server sorts each platform's versions highest first (numeric-aware,
// 1.10 above 1.9), so the first one is what GET /firmware/latest and the updater pick: marked "latest".
// Each version can be downloaded (through fetch with the session's token: a plain link would carry no
// credentials) and deleted, after a confirmation; deleting the latest makes the next one the latest, and
// agents asked to update are then offered that one. Whether a version is signed is shown as the server
// says; a server without signatures sends no such field, and then every version is unsigned. The
// signature sits beside the version rather than in a column of its own, and a phone leaves out the
// hash, so "Added" and the actions fit on a 390 px screen (they were cut off at the card's edge).
import { useState } from 'react';
import { api } from '../api/client';
import { PLATFORM_LABELS, type Platform } from '../api/types';
import { formatBytes } from '../ui/format';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, RelativeTime } from '../ui/widgets';
import { shortHash, type Firmware } from './firmware-types';
import { downloadWithToken } from './transfer';
import { Allowed } from '../auth/access';
import { TableFrame } from '../ui/table-frame';

export function FirmwareList({ firmware, onChanged }: { firmware: readonly Firmware[]; onChanged: () => void }) {
  const actions = useActionError();
  const [downloading, setDownloading] = useState<number>();
  const download = (f: Firmware) =>
    actions.guard(async () => {
      setDownloading(f.id);
      try {
        await downloadWithToken('/firmware/download', { platform: f.platform, version: f.version }, `rmm-agent-${f.platform}-${f.version}`);
      } finally {
        setDownloading(undefined);
      }
    });
  const remove = (f: Firmware) =>
    actions.guard(async () => {
      await api(`/firmware/${f.id}`, { method: 'DELETE' });
      onChanged();
    });

  return (
    <>
      <ErrorBanner error={actions.error} />
      <div className="panels firmware-lists">
        {(Object.keys(PLATFORM_LABELS) as Platform[]).map((platform) => {
          const versions = firmware.filter((f) => f.platform === platform);
          return (
            <div key={platform} className="card panel" data-testid={`firmware-${platform}`}>
              <h2>{`${PLATFORM_LABELS[platform]} (${platform})`}</h2>
              {versions.length === 0 ? (
                <Empty>No firmware yet.</Empty>
              ) : (
                <TableFrame label={`${PLATFORM_LABELS[platform]} firmware`}>
                  <table>
                    <thead>
                      <tr>
                        <th>Version</th>
                        <th className="num">Size</th>
                        <th className="wide-only">SHA-256</th>
                        <th>Added</th>
                        <ActionsHeader />
                      </tr>
                    </thead>
                    <tbody>
                      {versions.map((f, index) => (
                        <tr key={f.id} data-testid="firmware-row" data-version={f.version}>
                          <td>
                            <span className="firmware-version">
                              <span className="mono">{f.version}</span> {index === 0 && <Badge tone="good">latest</Badge>}{' '}
                              {f.signature ? <Badge tone="good">signed</Badge> : <Badge tone="muted">unsigned</Badge>}
                            </span>
                          </td>
                          <td className="num">{formatBytes(f.size)}</td>
                          <td className="mono wide-only" title={f.sha256}>
                            {shortHash(f.sha256)}…
                          </td>
                          <td>
                            <RelativeTime iso={f.created_at} />
                          </td>
                          <td className="firmware-actions">
                            <span className="confirm">
                              <button type="button" disabled={downloading === f.id} onClick={() => void download(f)}>
                                {downloading === f.id ? 'Downloading…' : 'Download'}
                              </button>
                              <Allowed need="server-wide">
                                <ConfirmButton
                                  label="Delete"
                                  question={`Delete ${PLATFORM_LABELS[platform]} firmware ${f.version}?${index === 0 ? ' Agents asked to update get the next version instead.' : ''}`}
                                  busyLabel="Deleting…"
                                  onConfirm={() => remove(f)}
                                />
                              </Allowed>
                            </span>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableFrame>
              )}
            </div>
          );
        })}
      </div>
    </>
  );
}
