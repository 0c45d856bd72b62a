// A list the server pages (`limit`, and the next page's URL in the Link header): the first page, "Load
// more" following the Link, and refreshes that keep as many items as the user has loaded (page after
// page, never more than the API's 1,000 at once). The filters and sort are the caller's query; a new
// query starts again at one page. The previous items stay on screen while a refresh runs.
import { useCallback, useRef, useState } from 'react';
import { apiNextPage, apiPage, type RequestOptions } from './api/client';
import { useResource } from './use-resource';

/** The API's largest page. */
const MAX_PAGE = 1000;

export interface PagedList<T> {
  items: T[] | undefined;
  error: Error | undefined;
  loading: boolean;
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
  reload: () => void;
}

interface Loaded<T> {
  key: string;
  items: T[];
  next: string | null;
}

type KeyOf<T> = (item: T) => string | number;

/** Appends a page, leaving out items already shown (the list may have moved between two requests). */
function appendNew<T>(items: T[], page: readonly T[], keyOf: KeyOf<T>): T[] {
  const seen = new Set(items.map(keyOf));
  return [...items, ...page.filter((i) => !seen.has(keyOf(i)))];
}

const byId = (item: unknown) => (item as { id: string | number }).id;

/** Items are told apart by their `id`, or by `keyOf` for a list whose items have none (a check's history). */
export function usePagedList<T extends { id: string | number }>(path: string, query: NonNullable<RequestOptions['query']>, options: { pageSize: number; refreshMs?: number }): PagedList<T>;
export function usePagedList<T>(path: string, query: NonNullable<RequestOptions['query']>, options: { pageSize: number; refreshMs?: number; keyOf: KeyOf<T> }): PagedList<T>;
export function usePagedList<T>(
  path: string,
  query: NonNullable<RequestOptions['query']>,
  options: { pageSize: number; refreshMs?: number; keyOf?: KeyOf<T> },
): PagedList<T> {
  const key = `${path}?${JSON.stringify(query)}`;
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<Error>();
  const keyOf: KeyOf<T> = options.keyOf ?? byId;
  const request = useRef({ path, query, pageSize: options.pageSize, keyOf });
  request.current = { path, query, pageSize: options.pageSize, keyOf };
  /** How many items the user has loaded for `key`; refreshes load as many again. */
  const shown = useRef({ key, count: 0 });
  if (shown.current.key !== key) shown.current = { key, count: 0 };

  const list = useResource<Loaded<T>>(
    async (signal) => {
      const { path: listPath, query: listQuery, pageSize } = request.current;
      const wanted = Math.max(pageSize, shown.current.count);
      let page = await apiPage<T>(listPath, { signal, query: { ...listQuery, limit: Math.min(wanted, MAX_PAGE) } });
      let items = page.items;
      while (items.length < wanted && page.next) {
        page = await apiNextPage<T>(page.next, { limit: Math.min(wanted - items.length, MAX_PAGE), signal });
        items = appendNew(items, page.items, request.current.keyOf);
      }
      if (!signal.aborted) {
        shown.current = { key, count: items.length };
        setMoreError(undefined);
      }
      return { key, items, next: page.next };
    },
    [key],
    { refreshMs: options.refreshMs },
  );

  const current = list.data?.key === key ? list.data : undefined;
  const { update } = list;
  const loadMore = useCallback(() => {
    const next = current?.next;
    if (!next || loadingMore) return;
    setLoadingMore(true);
    apiNextPage<T>(next, { limit: request.current.pageSize })
      .then((page) => {
        update((prev) => {
          if (prev?.key !== key) return prev;
          const items = appendNew(prev.items, page.items, request.current.keyOf);
          shown.current = { key, count: items.length };
          return { key, items, next: page.next };
        });
        setMoreError(undefined);
      })
      .catch((err: Error) => setMoreError(err))
      .finally(() => setLoadingMore(false));
  }, [current?.next, key, loadingMore, update]);

  return {
    items: list.data?.items,
    error: moreError ?? list.error,
    loading: list.loading,
    hasMore: Boolean(current?.next),
    loadingMore,
    loadMore,
    reload: list.reload,
  };
}
