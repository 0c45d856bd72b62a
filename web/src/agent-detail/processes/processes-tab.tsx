// The agent's processes, as the agent saw them when the list was asked for (refreshed on request, so
// rows do not move under the pointer): filter, sort by CPU or memory, and, for users who may change
// things, kill one with a chosen signal after a confirmation.
import { useState } from 'react';
import { allOf } from '../../api/api-types';
import { api } from '../../api/client';
import type { AgentDetail } from '../../api/types';
import { Allowed, useAccess } from '../../auth/access';
import { formatBytes, formatDateTime } from '../../ui/format';
import { byNumber, ordered, SortHeader, useSort } from '../../ui/sort-header';
import { TableFrame } from '../../ui/table-frame';
import { useActionError } from '../../ui/use-action-error';
import { ActionsHeader, ConfirmButton, ErrorBanner } from '../../ui/widgets';
import { useResource } from '../../use-resource';
import { gatedTab } from '../device/device-gate';
import { FilterRow, ListBody } from '../device/device-list';
import { agentPath, type DeviceProcess, type KillSignal } from '../device/device-types';
import '../device/device.css';

type Column = 'pid' | 'name' | 'user' | 'cpu' | 'memory' | 'started';
const SIGNALS = allOf<KillSignal>()(['TERM', 'INT', 'HUP', 'KILL']);

const COMPARE: Record<Column, (a: DeviceProcess, b: DeviceProcess) => number> = {
  pid: byNumber((p) => p.pid),
  name: (a, b) => a.name.localeCompare(b.name),
  user: (a, b) => (a.user ?? '').localeCompare(b.user ?? ''),
  cpu: byNumber((p) => p.cpu_percent),
  memory: byNumber((p) => p.rss_bytes),
  started: byNumber((p) => (p.started_at ? Date.parse(p.started_at) : null)),
};

function ProcessList({ agent }: { agent: AgentDetail }) {
  const agentId = agent.id;
  const list = useResource((signal) => api<{ processes: DeviceProcess[] }>(agentPath(agentId, '/processes'), { signal }), [agentId]);
  const [filter, setFilter] = useState('');
  const [signalName, setSignalName] = useState<KillSignal>('TERM');
  const [done, setDone] = useState('');
  const { sort, toggle } = useSort<Column>({ key: 'cpu', descending: true });
  const action = useActionError();
  const canWrite = useAccess().canWrite;

  const needle = filter.trim().toLowerCase();
  const shown = ordered(
    (list.data?.processes ?? []).filter((p) => !needle || `${p.pid} ${p.name} ${p.user ?? ''} ${p.command}`.toLowerCase().includes(needle)),
    COMPARE[sort.key],
    sort.descending,
  );
  const kill = (p: DeviceProcess) =>
    action.guard(async () => {
      setDone('');
      await api(agentPath(agentId, `/processes/${p.pid}/kill`), { method: 'POST', body: { signal: signalName } });
      setDone(`Sent ${signalName} to ${p.name} (pid ${p.pid}).`);
      list.reload();
    });
  const header = { sort, toggle };

  return (
    <div className="device-tab">
      <FilterRow filter={filter} setFilter={setFilter} placeholder="name, user or pid" refresh={list.reload} refreshing={list.loading}>
        <Allowed need="write">
          <label>
            Signal to send
            <select value={signalName} onChange={(e) => setSignalName(e.target.value as KillSignal)}>
              {SIGNALS.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        </Allowed>
      </FilterRow>
      {list.data && <p className="muted">{list.data.processes.length} processes, as the agent listed them; Refresh for a fresh look.</p>}
      <ErrorBanner error={list.error ?? action.error} />
      {done && (
        <p className="banner banner-info" role="status">
          {done}
        </p>
      )}
      <ListBody loaded={Boolean(list.data)} failed={Boolean(list.error)} count={shown.length} empty={needle ? 'No process matches the filter.' : 'The agent listed no processes.'}>
        <TableFrame label="Processes">
          <table className="device-table stack" data-testid="process-table">
            <thead>
              <tr>
                <SortHeader label="PID" column="pid" {...header} className="num" />
                <SortHeader label="Name" column="name" {...header} />
                <SortHeader label="User" column="user" {...header} />
                <SortHeader label="CPU" column="cpu" {...header} descendingFirst className="num" />
                <SortHeader label="Memory" column="memory" {...header} descendingFirst className="num" />
                <SortHeader label="Started" column="started" {...header} descendingFirst />
                <th>Command</th>
                {canWrite && <ActionsHeader />}
              </tr>
            </thead>
            <tbody>
              {shown.map((p) => (
                <tr key={p.pid} data-testid="process-row" data-pid={p.pid}>
                  <td className="num" data-label="PID">{p.pid}</td>
                  <td data-label="Name">{p.name}</td>
                  <td data-label="User">{p.user ?? '–'}</td>
                  <td className="num" data-label="CPU">{p.cpu_percent === null ? '–' : `${p.cpu_percent.toFixed(1)} %`}</td>
                  <td className="num" data-label="Memory">{p.rss_bytes === null ? '–' : formatBytes(p.rss_bytes)}</td>
                  <td data-label="Started">{formatDateTime(p.started_at)}</td>
                  <td className="mono command" data-label="Command" title={p.command}>
                    {p.command}
                  </td>
                  {canWrite && (
                    <td>
                      <ConfirmButton label="Kill" question={`Send ${signalName} to ${p.name} (pid ${p.pid})?`} busyLabel="Killing…" onConfirm={() => kill(p)} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      </ListBody>
    </div>
  );
}

export const ProcessesTab = gatedTab('processes', ProcessList);
