// One remote desktop from connect to end: POST /agents/{id}/desktop opens a tunnel to the agent's VNC
// server, noVNC's RFB speaks through the tunnel's WebSocket (opened here, so its close code and reason
// are ours to read), and the phase says what the page shows. The VNC password goes into the RFB stream
// only: it is handed to noVNC and forgotten. Leaving the page disconnects, and the server closes the
// tunnel with the socket.
import type RFB from '@novnc/novnc';
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { api } from '../../api/client';
import { currentToken } from '../../api/session';
import { errorText } from '../../ui/widgets';
import { agentPath, desktopSocketUrl, type DesktopTunnel } from './desktop-types';

export type DesktopPhase =
  | { kind: 'idle' }
  | { kind: 'opening' }
  | { kind: 'connecting'; tunnel: DesktopTunnel }
  | { kind: 'credentials'; tunnel: DesktopTunnel; username: boolean }
  | { kind: 'connected'; tunnel: DesktopTunnel; name: string }
  | { kind: 'ended'; reason: string };

export interface Quality {
  quality: number;
  compression: number;
}

export interface DesktopSession {
  phase: DesktopPhase;
  /** The last text the device put on its clipboard (when its VNC server shares it). */
  deviceClipboard: string;
  connect(viewOnly: boolean, quality: Quality): Promise<void>;
  sendCredentials(password: string, username?: string): void;
  disconnect(): void;
  /** The live RFB connection, for the toolbar (Ctrl+Alt+Del, view only, quality, paste). */
  rfb(): RFB | null;
}

export function useDesktop(agentId: string, screen: RefObject<HTMLDivElement | null>): DesktopSession {
  const [phase, setPhase] = useState<DesktopPhase>({ kind: 'idle' });
  const [deviceClipboard, setDeviceClipboard] = useState('');
  const rfbRef = useRef<RFB | null>(null);
  const alive = useRef(true);

  const disconnect = useCallback(() => {
    const rfb = rfbRef.current;
    rfbRef.current = null;
    rfb?.disconnect();
    setPhase({ kind: 'ended', reason: 'You disconnected. The desktop tunnel is closed.' });
  }, []);

  // Leaving the tab (or the page) ends the desktop: the server closes the tunnel with the socket.
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      rfbRef.current?.disconnect();
    };
  }, []);

  const connect = useCallback(
    async (viewOnly: boolean, quality: Quality) => {
      rfbRef.current?.disconnect();
      rfbRef.current = null;
      setDeviceClipboard('');
      setPhase({ kind: 'opening' });
      let tunnel: DesktopTunnel;
      try {
        tunnel = await api<DesktopTunnel>(agentPath(agentId, '/desktop'), { method: 'POST', body: viewOnly ? { view_only: true } : {} });
      } catch (err) {
        setPhase({ kind: 'ended', reason: `The desktop could not be opened: ${errorText(err)}` });
        return;
      }
      // noVNC (and its decoders) load with the first desktop, not with the console.
      const { default: Rfb } = await import('@novnc/novnc');
      const target = screen.current;
      // Left meanwhile: the unused tunnel closes at the server's idle limit.
      if (!alive.current || !target) return;
      const socket = new WebSocket(desktopSocketUrl(tunnel.websocket_path, currentToken() ?? ''));
      socket.binaryType = 'arraybuffer';
      let opened = false;
      let closeReason = '';
      let refusal = '';
      socket.addEventListener('open', () => (opened = true));
      socket.addEventListener('close', (event) => (closeReason = socketEnd(opened, event)));
      const rfb = new Rfb(target, socket, { shared: true });
      rfbRef.current = rfb;
      rfb.scaleViewport = true;
      rfb.viewOnly = tunnel.view_only || viewOnly;
      rfb.qualityLevel = quality.quality;
      rfb.compressionLevel = quality.compression;
      rfb.background = 'transparent';
      setPhase({ kind: 'connecting', tunnel });
      const current = () => rfbRef.current === rfb;
      rfb.addEventListener('connect', () => current() && setPhase({ kind: 'connected', tunnel, name: '' }));
      rfb.addEventListener('desktopname', (e) => current() && setPhase((p) => (p.kind === 'connected' ? { ...p, name: e.detail.name } : p)));
      rfb.addEventListener('credentialsrequired', (e) => current() && setPhase({ kind: 'credentials', tunnel, username: e.detail.types.includes('username') }));
      rfb.addEventListener('securityfailure', (e) => (refusal = `The VNC server refused the sign-in${e.detail.reason ? `: ${e.detail.reason}` : ' (wrong password?)'}.`));
      rfb.addEventListener('clipboard', (e) => current() && setDeviceClipboard(e.detail.text));
      rfb.addEventListener('disconnect', () => {
        if (!current()) return;
        rfbRef.current = null;
        setPhase({ kind: 'ended', reason: refusal || closeReason || 'The desktop session ended.' });
      });
    },
    [agentId, screen],
  );

  const sendCredentials = useCallback((password: string, username?: string) => {
    const rfb = rfbRef.current;
    if (!rfb) return;
    rfb.sendCredentials(username === undefined ? { password } : { username, password });
    setPhase((p) => (p.kind === 'credentials' ? { kind: 'connecting', tunnel: p.tunnel } : p));
  }, []);

  return { phase, deviceClipboard, connect, sendCredentials, disconnect, rfb: () => rfbRef.current };
}

/** What a closed desktop socket means to the technician. */
function socketEnd(opened: boolean, event: CloseEvent): string {
  // A refused upgrade hides its status from the page: the likely causes are these.
  if (!opened) return 'The server refused the desktop connection: a desktop opens only in the browser session that asked for it, once.';
  if (event.reason) return `The desktop session ended: ${event.reason}.`;
  if (event.code === 1000) return 'The desktop session ended.';
  return `The connection to the desktop was lost (code ${event.code}).`;
}
