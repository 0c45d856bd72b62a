// The agent's files: a directory at a time (its path in the URL, so a reload or a shared link keeps it),
// breadcrumbs up, folders down, a sortable list paged by the agent, downloads, and uploads by button or
// by dropping files on the tab, each with a progress bar and a cancel. New folder, rename and delete
// change the device; every transfer and change is audited on the server.
import { useRef, useState, type DragEvent } from 'react';
import { api } from '../../api/client';
import type { AgentDetail } from '../../api/types';
import { setQuery, useQuery } from '../../router';
import { Empty, ErrorBanner, Loading, LoadMore } from '../../ui/widgets';
import { useActionError } from '../../ui/use-action-error';
import { gatedTab } from '../device/device-gate';
import { agentPath, type FileEntry } from '../device/device-types';
import { Breadcrumbs } from './breadcrumbs';
import { homePath, joinPath } from './device-path';
import { FileTable, type FileActions } from './file-table';
import { NameForm } from './name-form';
import { TransferList } from './transfer-list';
import { useDirectory } from './use-directory';
import { useTransfers } from './use-transfers';
import '../device/device.css';
import './files.css';

function FileBrowser({ agent }: { agent: AgentDetail }) {
  const agentId = agent.id;
  const path = useQuery().get('path') || homePath(agent.platform);
  const directory = useDirectory(agentId, path);
  const here = directory.path ?? path;
  const { transfers, upload, download, dismiss } = useTransfers(agentId, directory.reload);
  const action = useActionError();
  const [creating, setCreating] = useState(false);
  const [overwrite, setOverwrite] = useState(false);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);

  const open = (target: string) => {
    setCreating(false);
    setQuery({ path: target });
  };
  const files = (rest: string, method: 'POST' | 'DELETE', body?: unknown, query?: Record<string, string | undefined>) =>
    api(agentPath(agentId, rest), { method, body, query });
  const actions: FileActions = {
    open: (entry) => open(joinPath(here, entry.name)),
    download: (entry) => download(joinPath(here, entry.name), entry.name, entry.size),
    rename: async (entry, name) => {
      await files('/files/rename', 'POST', { from: joinPath(here, entry.name), to: joinPath(here, name) });
      directory.reload();
    },
    remove: (entry: FileEntry) =>
      action.guard(async () => {
        await files('/files', 'DELETE', undefined, { path: joinPath(here, entry.name), recursive: entry.type === 'dir' ? 'true' : undefined });
        directory.reload();
      }),
  };
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const dropped = Array.from(event.dataTransfer.files);
    if (dropped.length > 0) upload(dropped, here, overwrite);
  };

  return (
    <div
      className={`device-tab files-tab${dragging ? ' dragging' : ''}`}
      data-testid="files-drop"
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => e.currentTarget === e.target && setDragging(false)}
      onDrop={drop}
    >
      <Breadcrumbs path={here} open={open} />
      <div className="row">
        <button type="button" className="primary" onClick={() => picker.current?.click()}>
          Upload files…
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          aria-label="Files to upload"
          onChange={(e) => {
            upload(Array.from(e.target.files ?? []), here, overwrite);
            e.target.value = '';
          }}
        />
        <label className="inline">
          <input type="checkbox" checked={overwrite} onChange={(e) => setOverwrite(e.target.checked)} /> Replace files of the same name
        </label>
        <button type="button" onClick={() => setCreating(true)}>
          New folder
        </button>
        <button type="button" onClick={directory.reload} disabled={directory.loading}>
          {directory.loading ? 'Refreshing…' : 'Refresh'}
        </button>
        <span className="muted">or drop files here to upload them to this folder</span>
      </div>
      {creating && (
        <NameForm
          label="New folder name"
          submitLabel="Create"
          onCancel={() => setCreating(false)}
          onSubmit={async (name) => {
            await files('/files/mkdir', 'POST', { path: joinPath(here, name) });
            setCreating(false);
            directory.reload();
          }}
        />
      )}
      <TransferList transfers={transfers} dismiss={dismiss} />
      <ErrorBanner error={directory.error ?? action.error} />
      {!directory.entries ? (
        !directory.error && <Loading />
      ) : directory.entries.length === 0 ? (
        <Empty>This folder is empty.</Empty>
      ) : (
        <FileTable entries={directory.entries} actions={actions} />
      )}
      <LoadMore list={directory} />
    </div>
  );
}

export const FilesTab = gatedTab('files', FileBrowser);
