// The agent's device sessions, newest first: shells, downloads, uploads, remote desktops, RDP and
// web-interface tunnels, who opened them, how long
// they ran, how they ended and how many bytes went each way. Admins play a shell's recording back in
// the page (or download it); recordings expire after the retention the settings give.
import { lazy, Suspense, useState } from 'react';
import { allOf } from '../../api/api-types';
import { useAccess } from '../../auth/access';
import { setQuery, useQuery } from '../../router';
import { formatBytes, formatDateTime, formatDuration } from '../../ui/format';
import { TableFrame } from '../../ui/table-frame';
import { usePagedList } from '../../use-paged-list';
import { Badge, Empty, ErrorBanner, Loading, LoadMore, RelativeTime } from '../../ui/widgets';
import type { DeviceSession } from '../device/device-types';
import type { TabProps } from '../tab-props';

const RecordingPlayer = lazy(() => import('./recording-player').then((m) => ({ default: m.RecordingPlayer })));

const KINDS = allOf<DeviceSession['kind']>()(['shell', 'download', 'upload', 'desktop', 'rdp', 'web']);
const PAGE = 50;
const REFRESH_MS = 30_000;

/** "42 s", "12 min", or "running" while the session is open. */
function lengthOf(session: DeviceSession): string {
  if (!session.ended_at) return 'running';
  const seconds = Math.max(0, Math.round((Date.parse(session.ended_at) - Date.parse(session.started_at)) / 1000));
  return seconds < 60 ? `${seconds} s` : formatDuration(seconds);
}

export function RecordingsTab({ agent }: TabProps) {
  const wanted = useQuery().get('kind');
  const kind = KINDS.find((k) => k === wanted);
  const sessions = usePagedList<DeviceSession>('/device-sessions', { agent_id: agent.id, kind }, { pageSize: PAGE, refreshMs: REFRESH_MS });
  const isAdmin = useAccess().isAdmin;
  const [playing, setPlaying] = useState<string | null>(null);
  const list = sessions.items ?? [];

  return (
    <div className="device-tab">
      <div className="row">
        <label>
          Kind
          <select value={kind ?? ''} onChange={(e) => setQuery({ kind: e.target.value || undefined })}>
            <option value="">All sessions</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">{isAdmin ? 'Shell sessions are recorded; play one back below.' : 'Shell sessions are recorded; admins can play them back.'}</span>
      </div>
      {playing && (
        <Suspense fallback={<Loading />}>
          <RecordingPlayer sessionId={playing} onClose={() => setPlaying(null)} />
        </Suspense>
      )}
      <ErrorBanner error={sessions.error} />
      {!sessions.items ? (
        !sessions.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>{kind ? `No ${kind} sessions on this agent.` : 'No shell, download or upload on this agent yet.'}</Empty>
      ) : (
        <TableFrame label="Device sessions">
          <table className="device-table stack" data-testid="session-table">
            <thead>
              <tr>
                <th>Kind</th>
                <th>Who</th>
                <th>Started</th>
                <th>Length</th>
                <th>Ended</th>
                <th className="num">In / out</th>
                <th>Recording</th>
              </tr>
            </thead>
            <tbody>
              {list.map((s) => (
                <tr key={s.id} data-testid="session-row" data-kind={s.kind}>
                  <td>
                    <Badge tone={s.kind === 'shell' ? 'good' : 'muted'}>{s.kind}</Badge>
                  </td>
                  <td data-label="By">{s.actor}</td>
                  <td data-label="Started" title={formatDateTime(s.started_at)}>
                    <RelativeTime iso={s.started_at} />
                  </td>
                  <td data-label="Length">{lengthOf(s)}</td>
                  <td data-label="Ended">{s.end_reason ?? (s.ended_at ? '–' : 'still open')}</td>
                  <td className="num">
                    {formatBytes(s.bytes_in)} / {formatBytes(s.bytes_out)}
                  </td>
                  <td>
                    {!s.has_recording ? (
                      <span className="muted">{s.kind === 'shell' ? 'none' : '–'}</span>
                    ) : isAdmin ? (
                      <button type="button" onClick={() => setPlaying(s.id)} aria-pressed={playing === s.id}>
                        Play ({formatBytes(s.recording_bytes ?? undefined)})
                      </button>
                    ) : (
                      formatBytes(s.recording_bytes ?? undefined)
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={sessions} />
    </div>
  );
}
