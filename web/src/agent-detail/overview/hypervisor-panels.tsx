// Hypervisor (Proxmox VE) panels: guests and containers with start/stop/shutdown, storage, ZFS pools
// and backup jobs. A guest action waits for the agent's answer (up to 5 minutes for a shutdown); the
// guest's new state arrives with the next heartbeat, so the row says so rather than guessing.
import type { ApiRequest } from '../../api/api-types';
import { useAccess } from '../../auth/access';
import { formatBytes, formatDateTime, formatDuration } from '../../ui/format';
import { at, bool, num, obj, objs, str, type Obj } from '../../ui/safe-data';
import { Badge, ConfirmButton, errorText } from '../../ui/widgets';
import { useAgentCommand, waitingText } from '../actions/agent-command';
import { StateBadge, UsageBar } from './common-panels';
import { DataPanel, dash } from './data-table';

type GuestAction = ApiRequest<'/agents/{id}/hypervisor/action', 'post'>['action'];

export function HypervisorPanels({ agentId, system, connected, onChanged }: { agentId: string; system: unknown; connected: boolean; onChanged: () => void }) {
  const hv = obj(at(system, 'hypervisor'));
  const guests = [...objs(hv.guests).map((g): Obj => ({ ...g, kind: 'vm' })), ...objs(hv.containers).map((c): Obj => ({ ...c, kind: 'container' }))].sort(
    (a, b) => (num(a.vmid) ?? 0) - (num(b.vmid) ?? 0),
  );
  // Starting or stopping a guest is a change: read users see the guests without the buttons.
  const canWrite = useAccess().canWrite;
  const percentOf = (used: unknown, total: unknown) => {
    const u = num(used);
    const t = num(total);
    return u !== undefined && t ? (u / t) * 100 : undefined;
  };
  return (
    <>
      <DataPanel
        title="Guests and containers"
        wide
        rows={guests}
        note={str(hv.cluster) && <p className="muted">Node {str(hv.node)} in cluster {str(hv.cluster)}</p>}
        empty="No guests or containers on this node."
        columns={[
          { label: 'ID', numeric: true, cell: (g) => dash(str(g.vmid)) },
          { label: 'Name', cell: (g) => dash(str(g.name)) },
          // On a phone: ID, name, status and the actions, which otherwise sat past the screen's edge.
          { label: 'Type', wideOnly: true, cell: (g) => (g.kind === 'vm' ? 'VM' : 'container') },
          { label: 'Status', cell: (g) => <StateBadge good={str(g.status) === '' ? undefined : str(g.status) === 'running'} text={str(g.status)} /> },
          { label: 'CPUs', numeric: true, wideOnly: true, cell: (g) => dash(str(g.cpus)) },
          { label: 'Memory', numeric: true, wideOnly: true, cell: (g) => (num(g.maxmem) === undefined ? '–' : `${formatBytes(num(g.mem))} of ${formatBytes(num(g.maxmem))}`) },
          { label: 'Uptime', numeric: true, wideOnly: true, cell: (g) => (num(g.uptime) ? formatDuration(num(g.uptime)) : '–') },
          ...(canWrite ? [{ label: 'Actions', cell: (g: Obj) => <GuestActions agentId={agentId} guest={g} connected={connected} onChanged={onChanged} /> }] : []),
        ]}
      />
      <DataPanel
        title="Storage"
        rows={objs(hv.storage)}
        empty="No storage reported."
        columns={[
          { label: 'Storage', cell: (s) => dash(str(s.storage)) },
          { label: 'Type', cell: (s) => dash(str(s.type)) },
          // "iso,vztmpl,backup" as one word kept the column wide enough to push "Active" out of the card.
          { label: 'Content', cell: (s) => dash(str(s.content).split(',').join(', ')) },
          { label: 'Used', numeric: true, cell: (s) => `${formatBytes(num(s.used))} of ${formatBytes(num(s.total))}` },
          { label: '%', numeric: true, cell: (s) => <UsageBar percent={percentOf(s.used, s.total)} /> },
          { label: 'Active', cell: (s) => <StateBadge good={bool(s.active)} text={bool(s.active) === false ? 'inactive' : 'active'} /> },
        ]}
      />
      <DataPanel
        title="ZFS pools"
        rows={objs(hv.zfs_pools)}
        empty="No ZFS pools."
        columns={[
          { label: 'Pool', cell: (p) => <span className="mono">{dash(str(p.name))}</span> },
          { label: 'Health', cell: (p) => <StateBadge good={str(p.health) === '' ? undefined : str(p.health) === 'ONLINE'} text={str(p.health)} /> },
          { label: 'Allocated', numeric: true, cell: (p) => `${formatBytes(num(p.alloc))} of ${formatBytes(num(p.size))}` },
          { label: '%', numeric: true, cell: (p) => <UsageBar percent={percentOf(p.alloc, p.size)} /> },
          { label: 'Fragmentation', numeric: true, cell: (p) => (num(p.frag) === undefined ? '–' : `${num(p.frag)} %`) },
        ]}
      />
      <DataPanel
        title="Backup jobs"
        rows={objs(hv.backup_jobs)}
        empty="No backup jobs."
        columns={[
          { label: 'Job', cell: (j) => dash(str(j.id)) },
          { label: 'Schedule', cell: (j) => dash(str(j.schedule)) },
          { label: 'Storage', cell: (j) => dash(str(j.storage)) },
          { label: 'Guests', cell: (j) => dash(str(j.vmids)) },
          { label: 'Enabled', cell: (j) => (bool(j.enabled) === false ? <span className="muted">no</span> : 'yes') },
          { label: 'Last run', cell: (j) => <LastRun run={obj(j.last_run)} /> },
        ]}
      />
    </>
  );
}

function LastRun({ run }: { run: Obj }) {
  if (!str(run.started)) return <span className="muted">never</span>;
  const status = str(run.status);
  return (
    <span className="row-inline">
      <Badge tone={status === 'ok' ? 'good' : 'bad'}>{dash(status)}</Badge>
      {formatDateTime(str(run.started))}
      {num(run.duration_seconds) !== undefined && <span className="muted">({formatDuration(num(run.duration_seconds))})</span>}
    </span>
  );
}

function GuestActions({ agentId, guest, connected, onChanged }: { agentId: string; guest: Obj; connected: boolean; onChanged: () => void }) {
  const command = useAgentCommand(agentId, 'hypervisor/action');
  const vmid = num(guest.vmid);
  const type = guest.kind === 'container' ? 'container' : 'vm';
  const running = str(guest.status) === 'running';
  if (vmid === undefined || !connected) return <span className="muted">–</span>;
  const act = async (action: GuestAction) => {
    await command.run({ action, vmid, type, ...(str(guest.node) && { node: str(guest.node) }) });
    onChanged();
  };
  const name = str(guest.name, String(vmid));
  return (
    <span className="row-inline guest-actions">
      {!running && (
        <button type="button" disabled={command.busy} onClick={() => void act('start')}>
          Start
        </button>
      )}
      {running && type === 'vm' && <ConfirmButton label="Shut down" question={`Shut down ${name}?`} busyLabel="Shutting down…" onConfirm={() => act('shutdown')} />}
      {running && <ConfirmButton label="Stop" question={`Stop ${name} hard?`} busyLabel="Stopping…" onConfirm={() => act('stop')} />}
      {command.busy && <span className="muted">{waitingText(command.busy, command.elapsed)}</span>}
      {command.result !== undefined && <span className="muted">Done; the new state shows with the next heartbeat.</span>}
      {command.error !== undefined && <span className="error-text">{errorText(command.error)}</span>}
    </span>
  );
}
