// Compares any two backups the technician picks (by default the two newest: what changed last). The
// server computes the diff; a pick the technician made stays until that backup is deleted.
import { useState } from 'react';
import { api, saveFile } from '../../api/client';
import { formatBytes, formatDateTime } from '../../ui/format';
import { useResource } from '../../use-resource';
import { Badge, Empty, ErrorBanner, Loading } from '../../ui/widgets';
import { backupsPath, safeFilePart, type ConfigBackup, type ConfigBackupDiff } from './backup-types';
import { DiffView, type DiffLayout } from './diff-view';

interface DiffProps {
  agentId: string;
  agentName: string;
  /** Newest first. */
  backups: readonly ConfigBackup[];
}

export function BackupDiff({ agentId, agentName, backups }: DiffProps) {
  const [chosenFrom, setChosenFrom] = useState<number>();
  const [chosenTo, setChosenTo] = useState<number>();
  const [layout, setLayout] = useState<DiffLayout>('unified');
  const exists = (id: number | undefined) => id !== undefined && backups.some((b) => b.id === id);
  const from = exists(chosenFrom) ? chosenFrom : backups[1]?.id;
  const to = exists(chosenTo) ? chosenTo : backups[0]?.id;

  return (
    <section className="backup-diff" data-testid="backup-diff" aria-labelledby="backup-diff-title">
      <h2 id="backup-diff-title">Compare backups</h2>
      {backups.length < 2 ? (
        <Empty>Take at least two backups to compare them.</Empty>
      ) : (
        <>
          <div className="row">
            <BackupSelect label="From" value={from} backups={backups} onChange={setChosenFrom} />
            <BackupSelect label="To" value={to} backups={backups} onChange={setChosenTo} />
            <button
              type="button"
              onClick={() => {
                setChosenFrom(to);
                setChosenTo(from);
              }}
            >
              Swap
            </button>
            <span className="spacer" />
            <div className="diff-layout" role="group" aria-label="Diff layout">
              <button type="button" aria-pressed={layout === 'unified'} onClick={() => setLayout('unified')}>
                Unified
              </button>
              <button type="button" aria-pressed={layout === 'split'} onClick={() => setLayout('split')}>
                Side by side
              </button>
            </div>
          </div>
          {from !== undefined && to !== undefined && from === to ? (
            <Empty>Choose two different backups.</Empty>
          ) : (
            from !== undefined && to !== undefined && <DiffResult agentId={agentId} agentName={agentName} from={from} to={to} layout={layout} />
          )}
        </>
      )}
    </section>
  );
}

function BackupSelect({ label, value, backups, onChange }: { label: string; value: number | undefined; backups: readonly ConfigBackup[]; onChange: (id: number) => void }) {
  return (
    <label>
      {label}
      <select value={value ?? ''} onChange={(event) => onChange(Number(event.target.value))}>
        {backups.map((b) => (
          <option key={b.id} value={b.id}>
            #{b.id} · {formatDateTime(b.created_at)} · {formatBytes(b.size)}
          </option>
        ))}
      </select>
    </label>
  );
}

function DiffResult({ agentId, agentName, from, to, layout }: { agentId: string; agentName: string; from: number; to: number; layout: DiffLayout }) {
  const result = useResource((signal) => api<ConfigBackupDiff>(backupsPath(agentId, '/diff'), { signal, query: { a: from, b: to } }), [agentId, from, to]);
  // While a new pair loads, the previous pair's diff would be misleading: show it only when it matches.
  const data = result.data && result.data.a.id === from && result.data.b.id === to ? result.data : undefined;
  if (result.error && !result.loading) return <ErrorBanner error={result.error} />;
  if (!data) return <Loading />;
  return (
    <div className="diff-result">
      <div className="row diff-summary">
        <Badge tone="good">+{data.added} added</Badge>
        <Badge tone="bad">−{data.removed} removed</Badge>
        <span className="muted">
          from #{data.a.id} ({formatDateTime(data.a.created_at)}) to #{data.b.id} ({formatDateTime(data.b.created_at)})
        </span>
        <span className="spacer" />
        {data.diff !== '' && (
          <button type="button" onClick={() => saveFile(`${safeFilePart(agentName, 'agent')}-backup-${data.a.id}-to-${data.b.id}.diff`, data.diff, 'text/x-diff')}>
            Download diff
          </button>
        )}
      </div>
      {data.diff === '' ? <Empty>The two backups hold the same configuration.</Empty> : <DiffView diff={data.diff} layout={layout} />}
    </div>
  );
}
