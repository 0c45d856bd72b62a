// The remote-access API of issue 60 as the console uses it: a desktop tunnel that the browser reaches
// over one WebSocket (noVNC speaks RFB through it), the agent's VNC target, and the RDP and
// web-interface launchers, whose tunnels accept TCP from the technician's own address until they expire.
import type { ApiBody } from '../../api/api-types';

export type DesktopTunnel = ApiBody<'/agents/{id}/desktop', 'post'>;
/** Where the agent reaches the device's VNC server, RDP port and web interface. */
export type RemoteAccess = ApiBody<'/agents/{id}/remote-access'>;
/** `rdp_file_path` is under the API's origin: fetched with the bearer token, then saved as a file. */
export type RdpLaunch = ApiBody<'/agents/{id}/rdp', 'post'>;
export type WebLaunch = ApiBody<'/agents/{id}/web-interface', 'post'>;

export function agentPath(agentId: string, rest: string): string {
  return `/agents/${encodeURIComponent(agentId)}${rest}`;
}

/** The WebSocket URL of a desktop tunnel: same origin, the session's own token in the query. */
export function desktopSocketUrl(websocketPath: string, token: string): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${websocketPath}?${new URLSearchParams({ token }).toString()}`;
}
