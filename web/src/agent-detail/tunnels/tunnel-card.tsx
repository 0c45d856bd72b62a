// One open tunnel: where it leads, the proxy port (what the technician connects to), what it is for and
// until when, who opened it and who may connect, its traffic, how to reach it from another machine (not
// a remote desktop's: its browser tab holds it), and "Close", which ends every session in it (anyone
// who may write may close a tunnel; only its opener may use it through the CLI).
import { useState } from 'react';
import { api } from '../../api/client';
import { useSessionState } from '../../api/session';
import { formatBytes, formatDateTime } from '../../ui/format';
import { Allowed } from '../../auth/access';
import { ConfirmButton, ErrorBanner, RelativeTime } from '../../ui/widgets';
import { ConnectCommand } from './connect-command';
import { connectCommand, directAddress, hostPort, openerText, PURPOSE_LABELS, suggestedListen, tunnelsPath, type Tunnel } from './tunnel-types';

export function TunnelCard({ agentId, tunnel, isNew, onClosed }: { agentId: string; tunnel: Tunnel; isNew: boolean; onClosed: () => void }) {
  const [error, setError] = useState<unknown>();
  const target = hostPort(tunnel.target_host, tunnel.target_port);
  const direct = directAddress(tunnel);
  const session = useSessionState().session;
  const mine = tunnel.opened_by.type === 'user' && tunnel.opened_by.name === session?.username;
  const allowed = tunnel.allow_from.join(', ');

  const close = async () => {
    setError(undefined);
    try {
      await api(tunnelsPath(agentId, `/tunnel/${encodeURIComponent(tunnel.tunnel_id)}`), { method: 'DELETE' });
      onClosed();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <article className={`card tunnel-card${isNew ? ' tunnel-new' : ''}`} data-testid="tunnel-row" aria-label={`Tunnel to ${target}`}>
      <div className="tunnel-head">
        <div>
          <div className="muted">Target (from the agent)</div>
          <h3 className="mono tunnel-target">{target}</h3>
        </div>
        <div className="tunnel-port" aria-label={`Proxy port ${tunnel.proxy_port}`}>
          <span className="muted">Proxy port</span>
          <strong className="mono">{tunnel.proxy_port}</strong>
        </div>
        <span className="spacer" />
        <Allowed need="write">
          <ConfirmButton label="Close" question={`Close the tunnel to ${target}? Open sessions end.`} busyLabel="Closing…" onConfirm={close} />
        </Allowed>
      </div>
      <ErrorBanner error={error} />
      <dl className="facts tunnel-facts">
        <dt>For</dt>
        <dd data-testid="tunnel-purpose">{PURPOSE_LABELS[tunnel.purpose]}</dd>
        <dt>Expires</dt>
        <dd>{tunnel.expires_at ? formatDateTime(tunnel.expires_at) : 'No time limit'}</dd>
        <dt>Listens on</dt>
        <dd className="mono">{hostPort(tunnel.bind_address, tunnel.proxy_port)}</dd>
        <dt>Opened by</dt>
        <dd>{openerText(tunnel.opened_by, session?.username)}</dd>
        <dt>May connect</dt>
        <dd>
          <span className="mono">{allowed}</span>
          {tunnel.refused_connections > 0 && <span className="muted"> ({tunnel.refused_connections} refused: other addresses or other accounts on the server)</span>}
        </dd>
        <dt>Sessions</dt>
        <dd>
          {tunnel.sessions}
          {tunnel.paused_sessions > 0 && <span className="muted"> ({tunnel.paused_sessions} waiting for a slow client)</span>}
        </dd>
        <dt>Traffic</dt>
        <dd>
          {formatBytes(tunnel.bytes_in)} to the target, {formatBytes(tunnel.bytes_out)} back
          {tunnel.buffered_bytes > 0 && <span className="muted"> ({formatBytes(tunnel.buffered_bytes)} buffered)</span>}
        </dd>
        <dt>Opened</dt>
        <dd>
          {formatDateTime(tunnel.created_at)} (<RelativeTime iso={tunnel.created_at} />)
        </dd>
        <dt>Tunnel ID</dt>
        <dd className="mono">{tunnel.tunnel_id}</dd>
      </dl>
      {tunnel.purpose === 'desktop' ? (
        <p className="muted tunnel-note">
          A remote desktop: only the browser tab that opened it shows it, and the tunnel closes with that tab or when its session idles.
        </p>
      ) : (
        <>
          <p className="tunnel-how">
            {direct ? (
              <>
                Connect directly to <strong className="mono">{direct}</strong> from <span className="mono">{allowed}</span>, or from any machine run:
              </>
            ) : (
              <>
                The proxy port listens on the server itself only. From your machine, run this (no open port needed) and connect to{' '}
                <strong className="mono">{suggestedListen(tunnel.target_port)}</strong>:
              </>
            )}
          </p>
          <ConnectCommand
            command={connectCommand(location.origin, tunnel)}
            filled={mine && session ? { label: 'Copy with my access token', command: connectCommand(location.origin, tunnel, session.token) } : undefined}
          />
          <p className="muted tunnel-note">
            {tunnel.opened_by.type === 'api_key' ? (
              <>
                Replace <code>...</code> with the API key that opened the tunnel ({tunnel.opened_by.name}, {tunnel.opened_by.key_hint}): only it may use the tunnel this way.
              </>
            ) : mine ? (
              <>
                Only you may use this tunnel this way: replace <code>...</code> with your access token (the second button fills it in; it expires with your sign-in).
              </>
            ) : (
              <>Only {openerText(tunnel.opened_by, session?.username)} may use this tunnel this way.</>
            )}{' '}
            {tunnel.expires_at ? `The tunnel closes at ${formatDateTime(tunnel.expires_at)}.` : 'The tunnel closes after 30 minutes without sessions.'}
          </p>
        </>
      )}
    </article>
  );
}
