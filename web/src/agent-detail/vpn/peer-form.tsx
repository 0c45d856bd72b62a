// "Add peer": the firewall generates the keys and the tunnel address; the technician names the peer and
// may narrow what it routes. Rarely needed settings (server instance, endpoint) sit under "More".
import { useState, type FormEvent } from 'react';
import type { ApiRequest } from '../../api/api-types';
import { api } from '../../api/client';
import { ErrorBanner } from '../../ui/widgets';
import { DEFAULT_ALLOWED_IPS, DEFAULT_SERVER_NAME, peerProblem, peersPath, type NewPeer, type VpnPeerCreated } from './vpn-types';

const EMPTY = { name: '', allowed_ips: DEFAULT_ALLOWED_IPS, dns: '', server_name: '', endpoint: '' };

export function PeerForm({ agentId, onCreated }: { agentId: string; onCreated: (peer: VpnPeerCreated) => void }) {
  const [fields, setFields] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const set = (key: keyof typeof EMPTY) => (event: { target: { value: string } }) => setFields((f) => ({ ...f, [key]: event.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // Empty optional fields are left out so the firewall's defaults apply.
    const peer: NewPeer = { name: fields.name.trim() };
    for (const key of ['allowed_ips', 'dns', 'server_name', 'endpoint'] as const) {
      const value = fields[key].trim();
      if (value) peer[key] = value;
    }
    const problem = peerProblem(peer);
    if (problem) {
      setError(new Error(problem));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      onCreated(await api<VpnPeerCreated>(peersPath(agentId), { method: 'POST', body: peer satisfies ApiRequest<'/agents/{id}/vpn/peers', 'post'> }));
      setFields(EMPTY);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="peer-form card" onSubmit={(event) => void submit(event)} aria-labelledby="peer-form-title">
      <h2 id="peer-form-title">Add a peer</h2>
      <div className="row">
        <label>
          Name
          <input name="name" value={fields.name} onChange={set('name')} required maxLength={255} placeholder="Laptop Anna" autoComplete="off" />
        </label>
        <label>
          Allowed IPs
          <input name="allowed_ips" value={fields.allowed_ips} onChange={set('allowed_ips')} maxLength={1000} placeholder={DEFAULT_ALLOWED_IPS} spellCheck={false} />
        </label>
        <label>
          DNS (optional)
          <input name="dns" value={fields.dns} onChange={set('dns')} maxLength={255} placeholder="10.0.0.1" spellCheck={false} />
        </label>
      </div>
      <details className="peer-more">
        <summary>More settings</summary>
        <div className="row">
          <label>
            VPN server instance
            <input name="server_name" value={fields.server_name} onChange={set('server_name')} maxLength={255} placeholder={DEFAULT_SERVER_NAME} spellCheck={false} />
          </label>
          <label>
            Endpoint (host:port)
            <input name="endpoint" value={fields.endpoint} onChange={set('endpoint')} maxLength={255} placeholder="the firewall's public address" spellCheck={false} />
          </label>
        </div>
      </details>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating peer…' : 'Add peer'}
        </button>
        {busy && (
          <span className="muted" role="status">
            The firewall creates the keys and reloads its VPN service (up to a minute)…
          </span>
        )}
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
