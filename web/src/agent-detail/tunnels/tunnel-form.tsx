// "Open tunnel": a target host and port as the agent sees them (127.0.0.1 is the agent itself). The
// input is checked here with the server's own rules so a typo is explained before the round trip.
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { ErrorBanner } from '../../ui/widgets';
import { TARGET_HOST, tunnelsPath, type OpenedTunnel } from './tunnel-types';

const COMMON_PORTS: readonly { label: string; port: number }[] = [
  { label: 'SSH', port: 22 },
  { label: 'HTTP', port: 80 },
  { label: 'HTTPS', port: 443 },
  { label: 'RDP', port: 3389 },
  { label: 'VNC', port: 5900 },
];

export function TunnelForm({ agentId, onOpened }: { agentId: string; onOpened: (tunnel: OpenedTunnel) => void }) {
  const [host, setHost] = useState('');
  const [port, setPort] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const targetHost = host.trim();
    const targetPort = Number(port);
    if (!TARGET_HOST.test(targetHost)) {
      setError(new Error('The target host is a name or an IP address: letters, digits and . : _ - only.'));
      return;
    }
    if (!Number.isInteger(targetPort) || targetPort < 1 || targetPort > 65_535) {
      setError(new Error('The target port is a whole number from 1 to 65535.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      onOpened(await api<OpenedTunnel>(tunnelsPath(agentId, '/tunnel'), { method: 'POST', body: { target_host: targetHost, target_port: targetPort } }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="tunnel-form" onSubmit={(event) => void submit(event)} aria-label="Open a tunnel">
      <div className="row">
        <label>
          Target host
          <input name="target_host" value={host} onChange={(e) => setHost(e.target.value)} placeholder="192.168.1.10" required maxLength={253} autoComplete="off" spellCheck={false} />
        </label>
        <label>
          Target port
          <input name="target_port" type="number" min={1} max={65535} step={1} value={port} onChange={(e) => setPort(e.target.value)} placeholder="443" required className="tunnel-port-input" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Opening…' : 'Open tunnel'}
        </button>
      </div>
      <div className="row tunnel-presets" role="group" aria-label="Common ports">
        <span className="muted">Common ports:</span>
        {COMMON_PORTS.map((p) => (
          <button key={p.port} type="button" className="link" onClick={() => setPort(String(p.port))}>
            {p.label} {p.port}
          </button>
        ))}
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
