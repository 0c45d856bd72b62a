// The firewall's WireGuard peers as it reports them (names and keys are the firewall's, shown as text),
// each deletable; deleting removes it from the firewall's configuration and reloads its VPN service.
import { useActionError } from '../../ui/use-action-error';
import { Allowed } from '../../auth/access';
import { ConfirmButton, Empty, ErrorBanner } from '../../ui/widgets';
import type { VpnPeer } from './vpn-types';

export function PeerList({ peers, onDelete }: { peers: readonly VpnPeer[]; onDelete: (peer: VpnPeer) => Promise<void> }) {
  const { error, guard } = useActionError();
  if (peers.length === 0) return <Empty>No WireGuard peers on this firewall.</Empty>;
  const remove = (peer: VpnPeer) => guard(() => onDelete(peer));
  return (
    <>
      <ErrorBanner error={error} />
      <div className="table-wrap">
        <table className="peer-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Tunnel address</th>
              <th>Allowed IPs</th>
              <th>DNS</th>
              <th>Endpoint</th>
              <th>Server</th>
              <th>Public key</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {peers.map((peer) => (
              <tr key={peer.uuid} data-testid="vpn-peer-row">
                <td className="peer-name">{peer.name}</td>
                <td className="mono">{peer.tunnel_address}</td>
                <td className="mono">{peer.allowed_ips}</td>
                <td className="mono">{peer.dns ?? <span className="muted">–</span>}</td>
                <td className="mono">{peer.endpoint ?? <span className="muted">–</span>}</td>
                <td>{peer.server_name}</td>
                <td>
                  <abbr className="mono" title={peer.public_key}>
                    {peer.public_key.length > 12 ? `${peer.public_key.slice(0, 12)}…` : peer.public_key}
                  </abbr>
                </td>
                <td>
                  <Allowed need="write">
                    <ConfirmButton label="Delete" question={`Delete peer ${peer.name}? Its client loses access.`} busyLabel="Deleting…" onConfirm={() => remove(peer)} />
                  </Allowed>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
