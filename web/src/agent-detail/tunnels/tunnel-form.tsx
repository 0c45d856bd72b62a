// "Open tunnel": a target host and port as the agent sees them (127.0.0.1 is the agent itself), and
// optionally who may connect to the proxy port (by default only the address this browser's request
// comes from). The input is checked here with the server's own rules so a typo is explained before the
// round trip; the server names a bad address itself.
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { ErrorBanner } from '../../ui/widgets';
import { MAX_ALLOW_FROM, parseAllowFrom, TARGET_HOST, tunnelsPath, type OpenedTunnel } from './tunnel-types';

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
  const [allowFrom, setAllowFrom] = useState('');
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
    const allow = parseAllowFrom(allowFrom);
    if (allow && allow.length > MAX_ALLOW_FROM) {
      setError(new Error(`At most ${MAX_ALLOW_FROM} addresses or networks may connect.`));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const body = { target_host: targetHost, target_port: targetPort, ...(allow ? { allow_from: allow } : {}) };
      onOpened(await api<OpenedTunnel>(tunnelsPath(agentId, '/tunnel'), { method: 'POST', body }));
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
      </div>
      <div className="row tunnel-presets" role="group" aria-label="Common ports">
        <span className="muted">Common ports:</span>
        {COMMON_PORTS.map((p) => (
          <button key={p.port} type="button" className="link" onClick={() => setPort(String(p.port))}>
            {p.label} {p.port}
          </button>
        ))}
      </div>
      <label className="tunnel-allow">
        Who may connect to the proxy port (optional)
        <input
          name="allow_from"
          value={allowFrom}
          onChange={(e) => setAllowFrom(e.target.value)}
          placeholder="e.g. 203.0.113.7, 10.20.0.0/16"
          autoComplete="off"
          spellCheck={false}
        />
        <span className="muted">
          Addresses or networks, comma-separated. Empty: only the address the server sees you connect from now. Anyone else is refused.
        </span>
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Opening…' : 'Open tunnel'}
      </button>
      <ErrorBanner error={error} />
    </form>
  );
}
