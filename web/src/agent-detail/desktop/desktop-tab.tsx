// The Remote desktop tab: the device's screen in the page through noVNC (Connect opens a new desktop
// tunnel each time), with the controls a technician needs, and the launchers for the technician's own
// programs: an RDP file for Windows machines, the web interface of firewalls and hypervisors.
// Read users may only watch, and only where an admin allows it (the server refuses otherwise and the
// tab says why).
import { useRef, useState } from 'react';
import { api } from '../../api/client';
import { useAccess } from '../../auth/access';
import { useResource } from '../../use-resource';
import { ErrorBanner } from '../../ui/widgets';
import type { TabProps } from '../tab-props';
import { DesktopClipboard } from './desktop-clipboard';
import { DesktopToolbar } from './desktop-toolbar';
import { agentPath, type RemoteAccess } from './desktop-types';
import { RdpLauncher, WebInterfaceLauncher } from './launchers';
import { QUALITIES, type QualityName } from './quality';
import { useDesktop, type DesktopPhase } from './use-desktop';
import { VncCredentials } from './vnc-credentials';
import { VncTargetForm } from './vnc-target-form';
import './desktop.css';

export function DesktopTab({ agent }: TabProps) {
  const access = useAccess();
  const container = useRef<HTMLDivElement>(null);
  const screen = useRef<HTMLDivElement>(null);
  const session = useDesktop(agent.id, screen);
  const remote = useResource((signal) => api<RemoteAccess>(agentPath(agent.id, '/remote-access'), { signal }), [agent.id]);
  const [viewOnly, setViewOnly] = useState(!access.canWrite);
  const [quality, setQuality] = useState<QualityName>('balanced');
  const { phase } = session;
  const live = phase.kind === 'connecting' || phase.kind === 'credentials' || phase.kind === 'connected';
  const forcedViewOnly = !access.canWrite || (live && phase.tunnel.view_only);

  const changeViewOnly = (on: boolean) => {
    setViewOnly(on);
    const rfb = session.rfb();
    if (rfb) rfb.viewOnly = on || forcedViewOnly;
  };
  const changeQuality = (name: QualityName) => {
    setQuality(name);
    const rfb = session.rfb();
    if (!rfb) return;
    rfb.qualityLevel = QUALITIES[name].quality;
    rfb.compressionLevel = QUALITIES[name].compression;
  };

  return (
    <div className="desktop-tab">
      <ErrorBanner error={remote.error} />
      {access.canWrite && remote.data && (
        <VncTargetForm key={JSON.stringify(remote.data)} agentId={agent.id} windows={agent.platform === 'windows'} initial={remote.data} onSaved={remote.reload} />
      )}
      {live ? (
        <DesktopToolbar
          rfb={phase.kind === 'connected' ? session.rfb() : null}
          container={container}
          forcedViewOnly={forcedViewOnly}
          viewOnly={viewOnly || forcedViewOnly}
          quality={quality}
          onViewOnly={changeViewOnly}
          onQuality={changeQuality}
          onDisconnect={session.disconnect}
        />
      ) : (
        <div className="row desktop-toolbar">
          <button type="button" className="primary" onClick={() => void session.connect(viewOnly || forcedViewOnly, QUALITIES[quality])} disabled={phase.kind === 'opening' || !agent.connected}>
            {phase.kind === 'opening' ? 'Opening…' : 'Connect'}
          </button>
          <label className="inline">
            <input type="checkbox" checked={viewOnly || forcedViewOnly} disabled={forcedViewOnly} onChange={(e) => setViewOnly(e.target.checked)} /> View only
          </label>
          {!access.canWrite && <span className="muted">Read users may watch only, and only where an admin allows it in the settings.</span>}
        </div>
      )}
      <p className="muted" role="status" data-testid="desktop-status">
        {statusText(phase, agent.connected)}
      </p>
      {phase.kind === 'credentials' && <VncCredentials askUsername={phase.username} onSubmit={session.sendCredentials} />}
      <div className={`desktop-screen${live ? ' desktop-live' : ''}`} ref={container}>
        <div className="desktop-canvas" ref={screen} aria-label="The device's screen" data-testid="desktop-screen" />
      </div>
      {phase.kind === 'connected' && <DesktopClipboard rfb={session.rfb()} fromDevice={session.deviceClipboard} viewOnly={viewOnly || forcedViewOnly} />}
      {access.canWrite && agent.platform === 'windows' && <RdpLauncher agent={agent} />}
      {access.canWrite && (agent.platform === 'linux' || agent.platform === 'freebsd') && remote.data && (
        <WebInterfaceLauncher agent={agent} defaultPort={remote.data.web_port} />
      )}
    </div>
  );
}

function statusText(phase: DesktopPhase, agentConnected: boolean): string {
  switch (phase.kind) {
    case 'idle':
      return agentConnected
        ? "Connect shows the device's screen through a tunnel that only this browser session may use. It closes when you leave this tab."
        : 'The agent is not connected right now; a remote desktop needs a live connection.';
    case 'opening':
      return 'Opening a tunnel to the VNC server…';
    case 'connecting':
      return `Connecting to the VNC server at ${phase.tunnel.target_host}:${phase.tunnel.target_port}…`;
    case 'credentials':
      return 'Waiting for the VNC password.';
    case 'connected':
      return `Connected${phase.name ? ` to ${phase.name}` : ''}${phase.tunnel.view_only ? ', view only' : ''}. The tunnel closes after ${phase.tunnel.idle_minutes} minutes without keyboard or mouse input; start and end are in the audit log.`;
    case 'ended':
      return phase.reason;
  }
}
