// The agents table's columns, defined once for the table and its CSV export so the file holds what the
// table shows: each column's text is the cell's text (a badge adds its word), except the last
// heartbeat, which the table shows relative ("3 min ago") and the file as its exact time.
import type { ReactNode } from 'react';
import type { ApiQuery } from '../api/api-types';
import { hostnameText, PLATFORM_LABELS, type Agent, type Customer } from '../api/types';
import { Link } from '../router';
import { formatDuration } from '../ui/format';
import { RelativeTime, StatusBadge } from '../ui/widgets';

/** The API's `sort` values. */
export type SortKey = NonNullable<ApiQuery<'/agents'>['sort']>;

export interface AgentColumn {
  id: string;
  label: string;
  /** Absent: the server cannot sort by it. */
  sort?: SortKey;
  /** Not shown by default on a phone (the name, status and fullest disk stay); the chooser shows it. */
  wide?: boolean;
  /** Not shown by default below 1500 px either, so the rest fits a laptop's screen (the CSV keeps every column). */
  medium?: boolean;
  numeric?: boolean;
  text(agent: Agent, customers: ReadonlyMap<number, Customer>): string;
  cell?(agent: Agent, customers: ReadonlyMap<number, Customer>): ReactNode;
}

const NONE = '–';
const or = (value: string | null | undefined) => (value === null || value === undefined || value === '' ? NONE : value);
const customerName = (a: Agent, customers: ReadonlyMap<number, Customer>) =>
  a.customer_id === null ? NONE : (customers.get(a.customer_id)?.name ?? `#${a.customer_id}`);
const diskText = (a: Agent) => (a.disk_used_percent === null ? NONE : `${a.disk_used_percent.toFixed(1)} %${a.disk_worst_mount ? ` ${a.disk_worst_mount}` : ''}`);
const versionText = (a: Agent) => `${or(a.agent_version)}${a.version_outdated ? ' old' : ''}${a.update_requested ? ' update' : ''}`;
/** A disk this full needs a technician soon. */
const DISK_WARN = 90;

export const AGENT_COLUMNS: readonly AgentColumn[] = [
  { id: 'name', label: 'Name', sort: 'name', text: (a) => a.name, cell: (a) => <Link to={`/agents/${a.id}`}>{a.name}</Link> },
  { id: 'hostname', label: 'Hostname', sort: 'hostname', wide: true, text: (a) => hostnameText(a.hostname) },
  { id: 'customer', label: 'Customer', sort: 'customer', wide: true, text: customerName },
  { id: 'platform', label: 'Platform', sort: 'platform', wide: true, medium: true, text: (a) => (a.platform ? PLATFORM_LABELS[a.platform] : NONE) },
  { id: 'status', label: 'Status', sort: 'status', text: (a) => a.status, cell: (a) => <StatusBadge status={a.status} /> },
  { id: 'last_heartbeat', label: 'Last heartbeat', sort: 'last_heartbeat', wide: true, text: (a) => a.last_heartbeat ?? 'never', cell: (a) => <RelativeTime iso={a.last_heartbeat} /> },
  { id: 'os', label: 'OS', sort: 'os', wide: true, text: (a) => or([a.os_name, a.os_version].filter(Boolean).join(' ')) },
  { id: 'ip', label: 'Primary IP', sort: 'ip', wide: true, medium: true, text: (a) => or(a.primary_ip) },
  { id: 'uptime', label: 'Uptime', sort: 'uptime', wide: true, medium: true, numeric: true, text: (a) => (a.uptime_seconds === null ? NONE : formatDuration(a.uptime_seconds)) },
  {
    id: 'disk',
    label: 'Disk used',
    sort: 'disk',
    numeric: true,
    text: diskText,
    cell: (a) => <span className={a.disk_used_percent !== null && a.disk_used_percent >= DISK_WARN ? 'text-bad' : undefined}>{diskText(a)}</span>,
  },
  { id: 'updates', label: 'Updates', sort: 'updates', wide: true, numeric: true, text: (a) => (a.pending_updates === null ? NONE : String(a.pending_updates)) },
  {
    id: 'reboot',
    label: 'Reboot',
    sort: 'reboot',
    wide: true,
    text: (a) => (a.reboot_required === null ? NONE : a.reboot_required ? 'needed' : 'no'),
    cell: (a) => (a.reboot_required ? <span className="badge badge-warn">needed</span> : a.reboot_required === false ? 'no' : NONE),
  },
  {
    id: 'version',
    label: 'Agent version',
    sort: 'version',
    wide: true,
    text: versionText,
    cell: (a) => (
      <span className="mono">
        {or(a.agent_version)}
        {a.version_outdated ? (
          <>
            {' '}
            <span className="badge badge-bad" title="Older than the newest firmware uploaded for its platform">
              old
            </span>
          </>
        ) : null}
        {a.update_requested ? (
          <>
            {' '}
            <span className="badge badge-warn" title="Update requested: the agent updates itself at its updater's next check">
              update
            </span>
          </>
        ) : null}
      </span>
    ),
  },
  {
    id: 'tags',
    label: 'Tags',
    wide: true,
    text: (a) => a.tags.join(', '),
    cell: (a) =>
      a.tags.map((tag, i) => (
        <span key={tag}>
          {i > 0 ? ', ' : ''}
          <span className="tag">{tag}</span>
        </span>
      )),
  },
];
