// One-click access for the technician's own programs: an .rdp file for a Windows machine (the RDP
// client connects to a tunnel port on this server), and a Windows-less device's web interface (a
// firewall's or hypervisor's GUI) in a new tab. Both tunnels accept connections only from the address
// this browser's requests come from, and only until they expire.
import { useState } from 'react';
import { API, api, apiResponse, saveBlob } from '../../api/client';
import type { AgentDetail } from '../../api/types';
import { formatDateTime } from '../../ui/format';
import { useSubmit } from '../../ui/use-submit';
import { ErrorBanner } from '../../ui/widgets';
import { hostPort } from '../tunnels/tunnel-types';
import { agentPath, type RdpLaunch, type WebLaunch } from './desktop-types';

export function RdpLauncher({ agent }: { agent: AgentDetail }) {
  const [launch, setLaunch] = useState<RdpLaunch>();
  const { busy, error, submit } = useSubmit(async () => {
    const opened = await api<RdpLaunch>(agentPath(agent.id, '/rdp'), { method: 'POST', body: {} });
    setLaunch(opened);
    // The file is the opener's only: fetched with the session's token, then handed to the browser.
    const path = opened.rdp_file_path.startsWith(API) ? opened.rdp_file_path.slice(API.length) : opened.rdp_file_path;
    saveBlob(await (await apiResponse(path)).blob(), `${agent.name}.rdp`);
  });
  return (
    <section className="desktop-launcher" aria-label="RDP">
      <button type="button" onClick={() => void submit()} disabled={busy || !agent.connected}>
        {busy ? 'Opening…' : 'Remote desktop (RDP)'}
      </button>
      <p className="muted">Downloads an .rdp file for your own RDP client (Remote Desktop Connection, FreeRDP, Remmina), through a tunnel from your address only.</p>
      {launch && (
        <p className="banner banner-info" role="status">
          Connect your RDP client to <strong className="mono">{hostPort(launch.tunnel.proxy_host, launch.tunnel.proxy_port)}</strong> until{' '}
          {formatDateTime(launch.expires_at)} (the downloaded file does this).
        </p>
      )}
      <ErrorBanner error={error} />
    </section>
  );
}

export function WebInterfaceLauncher({ agent, defaultPort }: { agent: AgentDetail; defaultPort: number | null }) {
  const [launch, setLaunch] = useState<WebLaunch>();
  const [port, setPort] = useState(defaultPort === null ? '' : String(defaultPort));
  const { busy, error, submit } = useSubmit(async () => {
    const opened = await api<WebLaunch>(agentPath(agent.id, '/web-interface'), { method: 'POST', body: port === '' ? {} : { port: Number(port) } });
    setLaunch(opened);
    window.open(opened.url, '_blank', 'noopener');
  });
  return (
    <section className="desktop-launcher" aria-label="Web interface">
      <form className="row" onSubmit={(e) => void submit(e)}>
        <button type="submit" disabled={busy || !agent.connected}>
          {busy ? 'Opening…' : 'Open web interface'}
        </button>
        <label className="inline">
          HTTPS port on the device
          <input type="number" min={1} max={65535} step={1} value={port} onChange={(e) => setPort(e.target.value)} className="desktop-port" required={defaultPort === null} />
        </label>
      </form>
      <p className="muted">
        Opens the device's own web interface in a new tab. Your browser will warn about the certificate: the device presents its own (usually
        self-signed) certificate, made out to its own name, not to this server's address. That is expected here; continue to the page. The link works
        only from your current address, until the tunnel expires.
      </p>
      {launch && (
        <p className="banner banner-info" role="status">
          Opened{' '}
          <a href={launch.url} target="_blank" rel="noopener noreferrer" className="mono">
            {launch.url}
          </a>{' '}
          until {formatDateTime(launch.expires_at)}.
        </p>
      )}
      <ErrorBanner error={error} />
    </section>
  );
}
