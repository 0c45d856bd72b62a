// The firewall's WireGuard peers as it reports them (names and keys are the firewall's, shown as text),
// each deletable; deleting removes it from the firewall's configuration and reloads its VPN service.
import { useActionError } from '../../ui/use-action-error';
import { Allowed } from '../../auth/access';
import { ActionsHeader, ConfirmButton, Empty, ErrorBanner } from '../../ui/widgets';
import type { VpnPeer } from './vpn-types';
import { TableFrame } from '../../ui/table-frame';

export function PeerList({ peers, onDelete }: { peers: readonly VpnPeer[]; onDelete: (peer: VpnPeer) => Promise<void> }) {
  const { error, guard } = useActionError();
  if (peers.length === 0) return <Empty>No WireGuard peers on this firewall.</Empty>;
  const remove = (peer: VpnPeer) => guard(() => onDelete(peer));
  return (
    <>
      <ErrorBanner error={error} />
      <TableFrame label="WireGuard peers">
        <table className="peer-table stack">
          <thead>
            <tr>
              <th>Name</th>
              <th>Tunnel address</th>
              <th>Allowed IPs</th>
              <th>DNS</th>
              <th>Endpoint</th>
              <th>Server</th>
              <th>Public key</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {peers.map((peer) => (
              <tr key={peer.uuid} data-testid="vpn-peer-row">
                <td data-label="Name" className="peer-name">{peer.name}</td>
                <td data-label="Tunnel address" className="mono">{peer.tunnel_address}</td>
                <td data-label="Allowed IPs" className="mono">{peer.allowed_ips}</td>
                <td data-label="DNS" className="mono">{peer.dns ?? <span className="muted">–</span>}</td>
                <td data-label="Endpoint" className="mono">{peer.endpoint ?? <span className="muted">–</span>}</td>
                <td data-label="Server">{peer.server_name}</td>
                <td data-label="Public key">
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
      </TableFrame>
    </>
  );
}
