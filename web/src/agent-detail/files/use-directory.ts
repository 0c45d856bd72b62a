// One directory of the device, page by page: the agent pages large directories (50,000 entries) with a
// cursor, so the first page shows at once and "Load more" appends the next. A reload (after an upload,
// a rename, a delete) starts again at the first page.
import { useCallback, useState } from 'react';
import { api } from '../../api/client';
import { useResource } from '../../use-resource';
import { agentPath, type FileEntry, type FileListing } from '../device/device-types';

const PAGE = 500;

export interface Directory {
  /** The directory's full path as the agent wrote it. */
  path: string | undefined;
  entries: FileEntry[] | undefined;
  error: Error | undefined;
  loading: boolean;
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
  reload: () => void;
}

function listPage(agentId: string, path: string, cursor: string | undefined, signal?: AbortSignal): Promise<FileListing> {
  return api<FileListing>(agentPath(agentId, '/files'), { query: { path, cursor, limit: PAGE }, signal });
}

export function useDirectory(agentId: string, path: string): Directory {
  // Each listing remembers the path asked for, which the agent may have written otherwise (`/tmp/`).
  const listing = useResource(async (signal) => ({ asked: `${agentId}\n${path}`, ...(await listPage(agentId, path, undefined, signal)) }), [agentId, path]);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<Error>();
  const { update } = listing;
  const cursor = listing.data?.next_cursor ?? null;

  const loadMore = useCallback(() => {
    if (cursor === null || loadingMore) return;
    setLoadingMore(true);
    setMoreError(undefined);
    listPage(agentId, path, cursor)
      .then((page) => update((previous) => (previous && previous.next_cursor === cursor ? { ...previous, next_cursor: page.next_cursor, entries: [...previous.entries, ...page.entries] } : previous)))
      .catch((err: Error) => setMoreError(err))
      .finally(() => setLoadingMore(false));
  }, [agentId, path, cursor, loadingMore, update]);

  // The previous directory's listing, while the next one loads, is not shown as this one.
  const current = listing.data?.asked === `${agentId}\n${path}` ? listing.data : undefined;
  return {
    path: current?.path,
    entries: current?.entries,
    error: moreError ?? listing.error,
    loading: listing.loading,
    hasMore: cursor !== null,
    loadingMore,
    loadMore,
    reload: listing.reload,
  };
}
