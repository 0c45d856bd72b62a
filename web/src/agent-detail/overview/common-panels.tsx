// Panels every platform's system data has: the machine, its disks, network interfaces, gateways,
// services and pending updates. Field names follow the reference agent's heartbeat; anything missing or
// of the wrong type shows as a dash (safe-data readers).
import { formatBytes, formatDateTime, formatDuration, formatPercent } from '../../ui/format';
import { arr, at, bool, num, obj, objs, str, type Obj } from '../../ui/safe-data';
import { Badge } from '../../ui/widgets';
import { DataPanel, FactsPanel, dash } from './data-table';

/** A green/red state word: "up", "online", "running". */
export function StateBadge({ good, text }: { good: boolean | undefined; text: string }) {
  if (good === undefined) return <span className="muted">{dash(text)}</span>;
  return <Badge tone={good ? 'good' : 'bad'}>{text}</Badge>;
}

export function SystemPanel({ system }: { system: unknown }) {
  const os = obj(at(system, 'os'));
  const hw = obj(at(system, 'hardware'));
  const cpu = obj(at(system, 'cpu'));
  const memory = obj(at(system, 'memory'));
  const load = arr(cpu.load_average).map((v) => num(v)?.toFixed(2) ?? '–');
  const used = num(memory.used_bytes);
  const total = num(memory.total_bytes);
  return (
    <FactsPanel
      title="System"
      facts={[
        ['Operating system', [str(os.name), str(os.version), str(os.build) && `(build ${str(os.build)})`].filter(Boolean).join(' ')],
        ['Kernel', str(os.kernel)],
        ['Architecture', str(os.arch)],
        ['Domain', str(os.domain)],
        ['Hardware', [str(hw.vendor), str(hw.product)].filter(Boolean).join(' ')],
        ['Serial number', str(hw.serial)],
        ['BIOS', str(hw.bios)],
        ['CPU', [str(cpu.model), num(cpu.cores) !== undefined && `${num(cpu.cores)} cores`].filter(Boolean).join(', ')],
        ['CPU usage', num(cpu.usage_percent) === undefined ? '' : formatPercent(num(cpu.usage_percent))],
        ['Load average', load.length ? load.join(' / ') : ''],
        ['Memory', used === undefined || total === undefined ? '' : `${formatBytes(used)} of ${formatBytes(total)} (${formatPercent((used / total) * 100)})`],
        ['Uptime', num(at(system, 'uptime_seconds')) === undefined ? '' : formatDuration(num(at(system, 'uptime_seconds')))],
        ['Collected', str(at(system, 'collected_at')) && formatDateTime(str(at(system, 'collected_at')))],
      ]}
    />
  );
}

export function DisksPanel({ system }: { system: unknown }) {
  return (
    <DataPanel
      title="Disks"
      rows={objs(at(system, 'disks'))}
      empty="No disks reported."
      columns={[
        { label: 'Mount', cell: (d) => <span className="mono">{dash(str(d.mount))}</span> },
        { label: 'Device', cell: (d) => dash(str(d.device)) },
        { label: 'Type', cell: (d) => dash(str(d.fstype)) },
        { label: 'Used', numeric: true, cell: (d) => `${formatBytes(num(d.used_bytes))} of ${formatBytes(num(d.total_bytes))}` },
        { label: '%', numeric: true, cell: (d) => <UsageBar percent={num(d.used_percent)} /> },
      ]}
    />
  );
}

/** A percentage with a bar that turns amber at 80 % and red at 90 %. */
export function UsageBar({ percent }: { percent: number | undefined }) {
  if (percent === undefined) return <span className="muted">–</span>;
  const tone = percent >= 90 ? 'bad' : percent >= 80 ? 'warn' : 'good';
  return (
    <span className="usage">
      <meter className={`usage-${tone}`} min={0} max={100} value={percent} />
      {formatPercent(percent)}
    </span>
  );
}

export function InterfacesPanel({ system }: { system: unknown }) {
  const addresses = (i: Obj) => [...arr(i.ipv4), ...arr(i.ipv6)].map((a) => str(a)).filter(Boolean);
  return (
    <DataPanel
      title="Interfaces"
      wide
      rows={objs(at(system, 'network.interfaces'))}
      empty="No interfaces reported."
      columns={[
        { label: 'Name', cell: (i) => <span className="mono">{dash(str(i.name))}</span> },
        { label: 'Description', cell: (i) => dash(str(i.description)) },
        { label: 'Status', cell: (i) => <StateBadge good={str(i.status) === '' ? undefined : str(i.status) === 'up'} text={str(i.status)} /> },
        { label: 'Addresses', cell: (i) => <span className="mono">{dash(addresses(i).join(', '))}</span> },
        { label: 'MAC', cell: (i) => <span className="mono">{dash(str(i.mac))}</span> },
        { label: 'Received', numeric: true, cell: (i) => formatBytes(num(i.rx_bytes)) },
        { label: 'Sent', numeric: true, cell: (i) => formatBytes(num(i.tx_bytes)) },
        { label: 'Errors', numeric: true, cell: (i) => String((num(i.rx_errors) ?? 0) + (num(i.tx_errors) ?? 0)) },
      ]}
    />
  );
}

export function GatewaysPanel({ system }: { system: unknown }) {
  return (
    <DataPanel
      title="Gateways"
      rows={objs(at(system, 'gateways'))}
      empty="No gateways reported."
      columns={[
        { label: 'Name', cell: (g) => dash(str(g.name)) },
        { label: 'Address', cell: (g) => <span className="mono">{dash(str(g.address))}</span> },
        { label: 'Status', cell: (g) => <StateBadge good={str(g.status) === '' ? undefined : str(g.status) === 'online'} text={str(g.status)} /> },
        { label: 'RTT', numeric: true, cell: (g) => (num(g.rtt_ms) === undefined ? '–' : `${num(g.rtt_ms)!.toFixed(1)} ms`) },
        { label: 'Loss', numeric: true, cell: (g) => formatPercent(num(g.loss_percent)) },
      ]}
    />
  );
}

export function ServicesPanel({ system }: { system: unknown }) {
  // Stopped services first: those are the ones a technician is looking for.
  const rows = objs(at(system, 'services')).sort((a, b) => Number(bool(a.running) ?? true) - Number(bool(b.running) ?? true));
  return (
    <DataPanel
      title="Services"
      rows={rows}
      empty="No services reported."
      columns={[
        { label: 'Name', cell: (s) => <span className="mono">{dash(str(s.name))}</span> },
        { label: 'Description', cell: (s) => dash(str(s.description)) },
        { label: 'State', cell: (s) => <StateBadge good={bool(s.running)} text={bool(s.running) === undefined ? '' : bool(s.running) ? 'running' : 'stopped'} /> },
        { label: 'Start', cell: (s) => dash(str(s.start_type)) },
      ]}
    />
  );
}

export function UpdatesPanel({ system }: { system: unknown }) {
  const updates = obj(at(system, 'updates'));
  const packages = objs(updates.packages);
  const pending = objs(updates.pending);
  const available = bool(updates.available);
  const note = (
    <p className="row">
      <StateBadge good={available === undefined ? undefined : !available} text={available === undefined ? 'not reported' : available ? 'updates available' : 'up to date'} />
      {str(updates.core_version_available) && <span>Version {str(updates.core_version_available)} available</span>}
      {bool(updates.needs_reboot) && <Badge tone="warn">reboot needed</Badge>}
      {str(updates.last_check) && <span className="muted">checked {formatDateTime(str(updates.last_check))}</span>}
    </p>
  );
  if (pending.length > 0) {
    return (
      <DataPanel
        title="Updates"
        rows={pending}
        note={note}
        empty="No pending updates."
        columns={[
          { label: 'KB', cell: (u) => <span className="mono">{dash(str(u.kb))}</span> },
          { label: 'Title', cell: (u) => dash(str(u.title)) },
          { label: 'Security', cell: (u) => (bool(u.security) ? <Badge tone="warn">security</Badge> : '') },
        ]}
      />
    );
  }
  return (
    <DataPanel
      title="Updates"
      rows={packages}
      note={note}
      empty="No package updates listed."
      columns={[
        { label: 'Package', cell: (p) => <span className="mono">{dash(str(p.name))}</span> },
        { label: 'Installed', cell: (p) => dash(str(p.current)) },
        { label: 'Available', cell: (p) => dash(str(p.available)) },
      ]}
    />
  );
}
