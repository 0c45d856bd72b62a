// The agent's services (systemd, init scripts, rc.d or the Windows service manager, as the agent
// reports), filtered by name or description. Users who may change things start, stop (after a
// confirmation) and restart them; the result, the service's new state and what the manager printed,
// is shown above the list.
import { useState } from 'react';
import { api } from '../../api/client';
import type { AgentDetail } from '../../api/types';
import { useAccess } from '../../auth/access';
import { TableFrame } from '../../ui/table-frame';
import { useActionError } from '../../ui/use-action-error';
import { ActionsHeader, Badge, ErrorBanner } from '../../ui/widgets';
import { useResource } from '../../use-resource';
import { gatedTab } from '../device/device-gate';
import { FilterRow, ListBody } from '../device/device-list';
import { agentPath, type DeviceService, type ServiceActionAnswer, type ServiceList, type ServiceAction } from '../device/device-types';
import { ServiceButtons } from './service-buttons';
import '../device/device.css';

const MANAGERS: Record<ServiceList['manager'], string> = { systemd: 'systemd', sysv: 'init scripts (service)', 'rc.d': 'rc.d', scm: 'the Windows service manager' };
const TONES: Record<DeviceService['state'], 'good' | 'warn' | 'bad' | 'muted'> = {
  running: 'good',
  starting: 'warn',
  stopping: 'warn',
  failed: 'bad',
  stopped: 'muted',
  unknown: 'muted',
};

interface Result {
  action: ServiceAction;
  answer: ServiceActionAnswer;
}

function ServiceListView({ agent }: { agent: AgentDetail }) {
  const agentId = agent.id;
  const list = useResource((signal) => api<ServiceList>(agentPath(agentId, '/services'), { signal }), [agentId]);
  const [filter, setFilter] = useState('');
  const [result, setResult] = useState<Result>();
  const action = useActionError();
  const canWrite = useAccess().canWrite;

  const needle = filter.trim().toLowerCase();
  const shown = (list.data?.services ?? []).filter((s) => !needle || `${s.name} ${s.description ?? ''}`.toLowerCase().includes(needle));
  const run = (service: DeviceService, verb: ServiceAction) =>
    action.guard(async () => {
      setResult(undefined);
      const answer = await api<ServiceActionAnswer>(agentPath(agentId, `/services/${encodeURIComponent(service.name)}/${verb}`), { method: 'POST' });
      setResult({ action: verb, answer });
      list.update((previous) => previous && { ...previous, services: previous.services.map((s) => (s.name === answer.service.name ? answer.service : s)) });
    });

  return (
    <div className="device-tab">
      <FilterRow filter={filter} setFilter={setFilter} placeholder="name or description" refresh={list.reload} refreshing={list.loading} />
      {list.data && (
        <p className="muted">
          {list.data.services.length} services, managed by {MANAGERS[list.data.manager]}.
        </p>
      )}
      <ErrorBanner error={list.error ?? action.error} />
      {result && (
        <div className="banner banner-info" role="status" data-testid="service-result">
          <p>
            {result.action} {result.answer.service.name}: now {result.answer.service.state}.
          </p>
          {result.answer.output.trim() && <pre className="device-output">{result.answer.output}</pre>}
        </div>
      )}
      <ListBody loaded={Boolean(list.data)} failed={Boolean(list.error)} count={shown.length} empty={needle ? 'No service matches the filter.' : 'The agent listed no services.'}>
        <TableFrame label="Services">
          <table className="device-table stack" data-testid="service-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Description</th>
                <th>State</th>
                <th>Start</th>
                {canWrite && <ActionsHeader />}
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr key={s.name} data-testid="service-row" data-name={s.name}>
                  <td className="mono">{s.name}</td>
                  <td className="description" data-label="Description" title={s.description ?? undefined}>
                    {s.description ?? '–'}
                  </td>
                  <td>
                    <Badge tone={TONES[s.state]}>{s.state}</Badge>
                  </td>
                  <td data-label="Start mode">{s.start_mode}</td>
                  {canWrite && (
                    <td>
                      <ServiceButtons service={s} run={(verb) => run(s, verb)} />
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

export const ServicesTab = gatedTab('services', ServiceListView);
