// Where the agent finds the device's VNC server, RDP port and web interface (GET/PUT
// /agents/{id}/remote-access): by default the agent's own 127.0.0.1:5900, since a VNC server should
// listen on loopback only and the agent connects locally. The web port is the platform's default unless
// set here; the RDP port matters on Windows only.
import { useState } from 'react';
import { api } from '../../api/client';
import { useSubmit } from '../../ui/use-submit';
import { ErrorBanner } from '../../ui/widgets';
import { agentPath, type RemoteAccess } from './desktop-types';

export function VncTargetForm({ agentId, windows, initial, onSaved }: { agentId: string; windows: boolean; initial: RemoteAccess; onSaved: (saved: RemoteAccess) => void }) {
  const [host, setHost] = useState(initial.vnc_host);
  const [port, setPort] = useState(String(initial.vnc_port));
  const [webPort, setWebPort] = useState(initial.web_port === null ? '' : String(initial.web_port));
  const [rdpPort, setRdpPort] = useState(String(initial.rdp_port));
  const [saved, setSaved] = useState(false);
  const { busy, error, submit } = useSubmit(async () => {
    setSaved(false);
    const body = { vnc_host: host.trim(), vnc_port: Number(port), web_port: webPort === '' ? null : Number(webPort), ...(windows ? { rdp_port: Number(rdpPort) } : {}) };
    onSaved(await api<RemoteAccess>(agentPath(agentId, '/remote-access'), { method: 'PUT', body }));
    setSaved(true);
  });
  return (
    <details className="desktop-target">
      <summary>
        VNC server: <span className="mono">{`${initial.vnc_host}:${initial.vnc_port}`}</span> (as the agent sees it)
      </summary>
      <form className="row" aria-label="Remote access targets" onSubmit={(e) => void submit(e)}>
        <label>
          VNC host
          <input value={host} onChange={(e) => setHost(e.target.value)} required maxLength={253} autoComplete="off" spellCheck={false} />
        </label>
        <label>
          VNC port
          <input type="number" min={1} max={65535} step={1} value={port} onChange={(e) => setPort(e.target.value)} required className="desktop-port" />
        </label>
        {windows && (
          <label>
            RDP port
            <input type="number" min={1} max={65535} step={1} value={rdpPort} onChange={(e) => setRdpPort(e.target.value)} required className="desktop-port" />
          </label>
        )}
        <label>
          Web interface port
          <input type="number" min={1} max={65535} step={1} value={webPort} onChange={(e) => setWebPort(e.target.value)} placeholder="none" className="desktop-port" />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save targets'}
        </button>
        <span className="muted" role="status">
          {saved ? 'Saved.' : ''}
        </span>
      </form>
      <ErrorBanner error={error} />
    </details>
  );
}
