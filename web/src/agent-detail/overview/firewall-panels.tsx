// Firewall (OPNsense) panels: VPN servers with their peers, certificates, plugins and DHCP leases.
import { daysUntil, formatBytes, formatDateTime } from '../../ui/format';
import { arr, at, bool, num, objs, str, type Obj } from '../../ui/safe-data';
import { Badge } from '../../ui/widgets';
import { StateBadge } from './common-panels';
import { DataPanel, dash } from './data-table';

/** A WireGuard handshake is a Unix time; 0 means never. */
function handshake(value: unknown): string {
  const seconds = num(value);
  return seconds ? formatDateTime(new Date(seconds * 1000).toISOString()) : 'never';
}

export function FirewallPanels({ system }: { system: unknown }) {
  const wgServers = objs(at(system, 'vpn.wireguard.servers'));
  const wgPeers = wgServers.flatMap((server) => objs(server.peers).map((peer): Obj => ({ ...peer, server: str(server.name) })));
  const openvpn = objs(at(system, 'vpn.openvpn.instances'));
  const ipsec = objs(at(system, 'vpn.ipsec.tunnels'));
  return (
    <>
      <DataPanel
        title="WireGuard servers"
        rows={wgServers}
        empty="No WireGuard servers."
        columns={[
          { label: 'Name', cell: (s) => dash(str(s.name)) },
          { label: 'Interface', cell: (s) => <span className="mono">{dash(str(s.interface))}</span> },
          { label: 'Port', numeric: true, cell: (s) => dash(str(s.listen_port)) },
          { label: 'Tunnel address', cell: (s) => <span className="mono">{dash(arr(s.tunnel_address).map((a) => str(a)).join(', '))}</span> },
          { label: 'Peers', numeric: true, cell: (s) => String(objs(s.peers).length) },
        ]}
      />
      <DataPanel
        title="WireGuard peers"
        wide
        rows={wgPeers}
        empty="No WireGuard peers."
        columns={[
          { label: 'Name', cell: (p) => dash(str(p.name)) },
          { label: 'Server', cell: (p) => dash(str(p.server)) },
          { label: 'Status', cell: (p) => <StateBadge good={str(p.status) === '' ? undefined : str(p.status) === 'online'} text={str(p.status)} /> },
          { label: 'Tunnel address', cell: (p) => <span className="mono">{dash(str(p.tunnel_address))}</span> },
          { label: 'Endpoint', cell: (p) => <span className="mono">{dash(str(p.endpoint))}</span> },
          { label: 'Last handshake', cell: (p) => handshake(p.latest_handshake) },
          { label: 'Received', numeric: true, cell: (p) => formatBytes(num(p.transfer_rx)) },
          { label: 'Sent', numeric: true, cell: (p) => formatBytes(num(p.transfer_tx)) },
        ]}
      />
      <DataPanel
        title="OpenVPN"
        rows={openvpn}
        empty="No OpenVPN instances."
        columns={[
          { label: 'Name', cell: (o) => dash(str(o.name)) },
          { label: 'Port', numeric: true, cell: (o) => `${str(o.port, '–')}/${str(o.protocol, '?')}` },
          { label: 'Clients', numeric: true, cell: (o) => str(o.clients_connected, '–') },
        ]}
      />
      {ipsec.length > 0 && (
        <DataPanel
          title="IPsec tunnels"
          rows={ipsec}
          empty="No IPsec tunnels."
          columns={[
            { label: 'Name', cell: (t) => dash(str(t.name ?? t.description)) },
            { label: 'Remote', cell: (t) => <span className="mono">{dash(str(t.remote ?? t.remote_address))}</span> },
            { label: 'Status', cell: (t) => dash(str(t.status)) },
          ]}
        />
      )}
      <DataPanel
        title="Certificates"
        wide
        rows={objs(at(system, 'certificates')).sort((a, b) => (daysUntil(str(a.valid_to)) ?? Infinity) - (daysUntil(str(b.valid_to)) ?? Infinity))}
        empty="No certificates reported."
        columns={[
          { label: 'Name', cell: (c) => dash(str(c.name)) },
          { label: 'Subject', cell: (c) => dash(str(c.subject)) },
          { label: 'Issuer', cell: (c) => dash(str(c.issuer)) },
          { label: 'Valid to', cell: (c) => <CertificateExpiry cert={c} /> },
          { label: 'In use', cell: (c) => (bool(c.in_use) === false ? <span className="muted">no</span> : 'yes') },
        ]}
      />
      <DataPanel
        title="Plugins"
        rows={objs(at(system, 'plugins'))}
        empty="No plugins reported."
        columns={[
          { label: 'Name', cell: (p) => <span className="mono">{dash(str(p.name))}</span> },
          { label: 'Version', cell: (p) => dash(str(p.version)) },
          { label: 'Installed', cell: (p) => (bool(p.installed) === false ? <span className="muted">no</span> : 'yes') },
        ]}
      />
      <DataPanel
        title="DHCP leases"
        rows={objs(at(system, 'dhcp.leases'))}
        empty="No DHCP leases."
        columns={[
          { label: 'Address', cell: (l) => <span className="mono">{dash(str(l.address))}</span> },
          { label: 'Host name', cell: (l) => dash(str(l.hostname)) },
          { label: 'MAC', cell: (l) => <span className="mono">{dash(str(l.mac))}</span> },
          { label: 'Interface', cell: (l) => dash(str(l.interface)) },
          { label: 'Ends', cell: (l) => formatDateTime(str(l.ends)) },
        ]}
      />
    </>
  );
}

/** The expiry date, with a warning badge inside 30 days and a red one once expired (from the date, not the agent's count). */
function CertificateExpiry({ cert }: { cert: Obj }) {
  const days = daysUntil(str(cert.valid_to));
  return (
    <span className="row-inline">
      {formatDateTime(str(cert.valid_to))}
      {days !== undefined && days < 0 && <Badge tone="bad">expired</Badge>}
      {days !== undefined && days >= 0 && days <= 30 && <Badge tone="warn">{days} days left</Badge>}
    </span>
  );
}
