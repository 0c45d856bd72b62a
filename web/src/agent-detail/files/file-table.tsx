// A directory's entries: folders first, then sorted by name, size or time as the user chooses (within
// what is loaded), with each row's actions for users who may change things: download, rename (in
// place) and delete after a confirmation, which names everything a folder's delete takes with it.
import { useState } from 'react';
import { formatBytes, formatDateTime } from '../../ui/format';
import { compareNatural } from '../../ui/natural-order';
import { byNumber, ordered, SortHeader, useSort } from '../../ui/sort-header';
import { TableFrame } from '../../ui/table-frame';
import { ActionsHeader, ConfirmButton } from '../../ui/widgets';
import type { FileEntry } from '../device/device-types';
import { NameForm } from './name-form';

type Column = 'name' | 'size' | 'modified';

const COMPARE: Record<Column, (a: FileEntry, b: FileEntry) => number> = {
  name: (a, b) => compareNatural(a.name, b.name),
  size: byNumber((e) => e.size),
  modified: byNumber((e) => Date.parse(e.modified_at)),
};

export interface FileActions {
  open(entry: FileEntry): void;
  download(entry: FileEntry): void;
  rename(entry: FileEntry, name: string): Promise<void>;
  remove(entry: FileEntry): Promise<void>;
}

const opensAsDirectory = (entry: FileEntry) => entry.type === 'dir' || entry.type === 'link';

export function FileTable({ entries, actions }: { entries: readonly FileEntry[]; actions: FileActions }) {
  const { sort, toggle } = useSort<Column>({ key: 'name', descending: false });
  const [renaming, setRenaming] = useState<string | null>(null);
  const sorted = ordered(entries, COMPARE[sort.key], sort.descending);
  // Folders stay on top whichever way the rest is sorted.
  const rows = [...sorted.filter((e) => e.type === 'dir'), ...sorted.filter((e) => e.type !== 'dir')];
  const header = { sort, toggle };
  return (
    <TableFrame label="Files">
      <table className="device-table file-table stack" data-testid="file-table">
        <thead>
          <tr>
            <SortHeader label="Name" column="name" {...header} />
            <SortHeader label="Size" column="size" {...header} descendingFirst className="num" />
            <SortHeader label="Modified" column="modified" {...header} descendingFirst />
            <th>Mode</th>
            <ActionsHeader />
          </tr>
        </thead>
        <tbody>
          {rows.map((entry) => (
            <tr key={entry.name} data-testid="file-row" data-name={entry.name} data-type={entry.type}>
              <td>
                {renaming === entry.name ? (
                  <NameForm
                    label={`New name for ${entry.name}`}
                    initial={entry.name}
                    submitLabel="Rename"
                    onCancel={() => setRenaming(null)}
                    onSubmit={async (name) => {
                      await actions.rename(entry, name);
                      setRenaming(null);
                    }}
                  />
                ) : opensAsDirectory(entry) ? (
                  <button type="button" className="link mono" onClick={() => actions.open(entry)} title={entry.type === 'link' ? `Link to ${entry.link_target ?? '?'}` : undefined}>
                    {entry.type === 'dir' ? '📁 ' : '🔗 '}
                    {entry.name}
                    {entry.type === 'dir' ? '/' : ''}
                  </button>
                ) : (
                  <span className="mono">{entry.name}</span>
                )}
                {entry.type === 'link' && entry.link_target && <span className="muted"> → {entry.link_target}</span>}
              </td>
              <td className="num" data-label="Size">{entry.type === 'dir' ? '–' : formatBytes(entry.size)}</td>
              <td data-label="Modified">{formatDateTime(entry.modified_at)}</td>
              <td className="mono" data-label="Mode">{entry.mode ?? '–'}</td>
              <td>
                <span className="confirm">
                  {entry.type !== 'dir' && (
                    <button type="button" onClick={() => actions.download(entry)} aria-label={`Download ${entry.name}`}>
                      Download
                    </button>
                  )}
                  <button type="button" onClick={() => setRenaming(entry.name)} aria-label={`Rename ${entry.name}`}>
                    Rename
                  </button>
                  <ConfirmButton
                    label="Delete"
                    question={entry.type === 'dir' ? `Delete the folder ${entry.name} and everything in it?` : `Delete ${entry.name}?`}
                    busyLabel="Deleting…"
                    onConfirm={() => actions.remove(entry)}
                  />
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}
