// The new peer's client configuration, shown once: it holds the private key and the server keeps no
// copy, so the panel says so, offers the QR code, the text and a .conf download, and closing it (asked
// twice) drops the configuration from memory.
import { useEffect, useRef } from 'react';
import { saveFile } from '../../api/client';
import { ConfirmButton } from '../../ui/widgets';
import { QrCode } from '../../ui/qr-code';
import { confFileName, type VpnPeerCreated } from './vpn-types';

export function ClientConfig({ peer, onClose }: { peer: VpnPeerCreated; onClose: () => void }) {
  const panelRef = useRef<HTMLElement>(null);
  // Bring the one-time configuration into view: it appears after a wait, possibly below the fold.
  useEffect(() => {
    panelRef.current?.focus();
    panelRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, [peer.uuid]);

  return (
    <section ref={panelRef} className="card client-config" tabIndex={-1} aria-labelledby="client-config-title" data-testid="client-config">
      <div className="row client-config-head">
        <h2 id="client-config-title">Client configuration for {peer.name}</h2>
        <span className="spacer" />
        <ConfirmButton label="Close" question="The configuration cannot be shown again. Close it?" onConfirm={async () => onClose()} />
      </div>
      <p className="banner banner-warn">
        This is the only time this configuration is shown: it contains the peer's private key and the server keeps no copy. Scan the QR code with
        the WireGuard app or download the file now.
      </p>
      <div className="client-config-body">
        <QrCode text={peer.client_config} label={`QR code of the WireGuard configuration for ${peer.name}`} />
        <div className="client-config-text">
          <dl className="facts">
            <dt>Tunnel address</dt>
            <dd className="mono">{peer.tunnel_address}</dd>
            <dt>Endpoint</dt>
            <dd className="mono">{peer.endpoint ?? '–'}</dd>
          </dl>
          <pre aria-label="WireGuard client configuration">{peer.client_config}</pre>
          <button type="button" className="primary" onClick={() => saveFile(confFileName(peer.name), peer.client_config, 'text/plain')}>
            Download .conf
          </button>
        </div>
      </div>
    </section>
  );
}
