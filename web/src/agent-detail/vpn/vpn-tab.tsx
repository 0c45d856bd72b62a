// WireGuard peers on the firewall. Every read and change goes to the firewall itself through its agent,
// so the list is loaded once and on demand rather than on a timer. A new peer's client configuration
// exists only in the creation answer and lives here in memory until the panel is closed.
import { useState } from 'react';
import { api } from '../../api/client';
import { Allowed } from '../../auth/access';
import { useResource } from '../../use-resource';
import { ErrorBanner, Loading } from '../../ui/widgets';
import type { TabProps } from '../tab-props';
import { ClientConfig } from './client-config';
import { PeerForm } from './peer-form';
import { PeerList } from './peer-list';
import { peersPath, type VpnPeer, type VpnPeerCreated } from './vpn-types';
import './vpn.css';

export function VpnTab({ agent }: TabProps) {
  const peers = useResource((signal) => api<VpnPeer[]>(peersPath(agent.id), { signal }), [agent.id]);
  const [created, setCreated] = useState<VpnPeerCreated>();

  const remove = async (peer: VpnPeer) => {
    await api(peersPath(agent.id, `/${encodeURIComponent(peer.uuid)}`), { method: 'DELETE' });
    peers.reload();
  };

  return (
    <div className="vpn-tab">
      {!agent.connected && <p className="banner banner-warn">The agent is not connected right now; VPN peers are read from the firewall and need a live connection.</p>}
      <Allowed need="write">
        <PeerForm
          agentId={agent.id}
          onCreated={(peer) => {
            setCreated(peer);
            peers.reload();
          }}
        />
      </Allowed>
      {created && <ClientConfig peer={created} onClose={() => setCreated(undefined)} />}
      <div className="row vpn-head">
        <h2>WireGuard peers</h2>
        <button type="button" disabled={peers.loading} onClick={peers.reload}>
          {peers.loading ? 'Loading…' : 'Refresh'}
        </button>
      </div>
      <ErrorBanner error={peers.error} />
      {peers.data ? <PeerList peers={peers.data} onDelete={remove} /> : !peers.error && <Loading />}
    </div>
  );
}
