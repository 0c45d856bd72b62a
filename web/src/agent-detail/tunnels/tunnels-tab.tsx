// TCP tunnels through the agent: open one to a host and port the agent can reach, and see the open ones
// (refreshed every 10 s for sessions and traffic) with how to connect to them.
import { useState } from 'react';
import { api } from '../../api/client';
import { Allowed } from '../../auth/access';
import { useResource } from '../../use-resource';
import { Empty, ErrorBanner, Loading } from '../../ui/widgets';
import type { TabProps } from '../tab-props';
import { TunnelCard } from './tunnel-card';
import { TunnelForm } from './tunnel-form';
import { tunnelsPath, type Tunnel } from './tunnel-types';
import './tunnels.css';

const REFRESH_MS = 10_000;

export function TunnelsTab({ agent }: TabProps) {
  const tunnels = useResource((signal) => api<Tunnel[]>(tunnelsPath(agent.id, '/tunnels'), { signal }), [agent.id], { refreshMs: REFRESH_MS });
  const [newId, setNewId] = useState<string>();
  const list = [...(tunnels.data ?? [])].sort((x, y) => Date.parse(y.created_at) - Date.parse(x.created_at));

  return (
    <div className="tunnels-tab">
      <Allowed need="write">
        <h2>Open a tunnel</h2>
        <p className="muted">
          Reach a TCP service in the agent's network (a web interface, RDP, SSH…) through a port on this server. Use 127.0.0.1 for the agent's own
          machine.
        </p>
        {!agent.connected && <p className="banner banner-warn">The agent is not connected right now; a tunnel needs a live connection.</p>}
        <TunnelForm
          agentId={agent.id}
          onOpened={(tunnel) => {
            setNewId(tunnel.tunnel_id);
            tunnels.reload();
          }}
        />
      </Allowed>
      <div className="row tunnels-head">
        <h2>Open tunnels</h2>
        <span className="muted">Refreshed every 10 s</span>
      </div>
      <ErrorBanner error={tunnels.error} />
      {!tunnels.data ? (
        !tunnels.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>No tunnels are open to this agent.</Empty>
      ) : (
        <div className="tunnel-list">
          {list.map((tunnel) => (
            <TunnelCard key={tunnel.tunnel_id} agentId={agent.id} tunnel={tunnel} isNew={tunnel.tunnel_id === newId} onClosed={tunnels.reload} />
          ))}
        </div>
      )}
    </div>
  );
}
