// Stored firmware per platform. The server sorts each platform's versions highest first (numeric-aware,
// 1.10 above 1.9), so the first one is what GET /firmware/latest and the updater pick: marked "latest".
import { PLATFORM_LABELS, type Platform } from '../api/types';
import { formatBytes } from '../ui/format';
import { Badge, Empty, RelativeTime } from '../ui/widgets';
import { shortHash, type Firmware } from './firmware-types';

export function FirmwareList({ firmware }: { firmware: readonly Firmware[] }) {
  return (
    <div className="panels firmware-lists">
      {(Object.keys(PLATFORM_LABELS) as Platform[]).map((platform) => {
        const versions = firmware.filter((f) => f.platform === platform);
        return (
          <div key={platform} className="card panel" data-testid={`firmware-${platform}`}>
            <h3>{`${PLATFORM_LABELS[platform]} (${platform})`}</h3>
            {versions.length === 0 ? (
              <Empty>No firmware yet.</Empty>
            ) : (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Version</th>
                      <th className="num">Size</th>
                      <th>SHA-256</th>
                      <th>Added</th>
                    </tr>
                  </thead>
                  <tbody>
                    {versions.map((f, index) => (
                      <tr key={f.id} data-testid="firmware-row">
                        <td>
                          <span className="mono">{f.version}</span> {index === 0 && <Badge tone="good">latest</Badge>}
                        </td>
                        <td className="num">{formatBytes(f.size)}</td>
                        <td className="mono" title={f.sha256}>
                          {shortHash(f.sha256)}…
                        </td>
                        <td>
                          <RelativeTime iso={f.created_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        );
      })}
    </div>
  );
}
