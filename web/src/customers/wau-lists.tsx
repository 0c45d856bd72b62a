// The two lists winget-autoupdate (WAU) downloads for this customer: the ListPath to configure in WAU,
// and each list's current text on request. WAU puts the list's file name before the ListPath's query, so
// `…/customers/<id>/wau?api_key=<key>` makes it fetch `…/wau/included_apps.txt?api_key=<key>`. A plain
// link to a list would not do: the console's token is not a cookie, so the browser would fetch it
// unauthenticated.
import { useState } from 'react';
import type { ApiBody } from '../api/api-types';
import { API, api, apiText } from '../api/client';
import { useAccess } from '../auth/access';
import { useActionError } from '../ui/use-action-error';
import { ErrorBanner } from '../ui/widgets';
import { useResource } from '../use-resource';

const LISTS = [
  { kind: 'included', file: 'included_apps.txt', what: 'allowed package ids' },
  { kind: 'excluded', file: 'excluded_apps.txt', what: 'blocked package ids' },
] as const;

type ListKind = (typeof LISTS)[number]['kind'];

/**
 * Where PCs reach the server: the settings' backend URL, else the address this console is served from.
 * Settings are server-wide, refused to a user limited to customers: they get this console's address.
 */
export function useServerBase(): string {
  const scoped = useAccess().scoped;
  const settings = useResource((signal) => (scoped ? Promise.resolve(undefined) : api<ApiBody<'/settings'>>('/settings', { signal })), [scoped]);
  return (settings.data?.backend_url ?? window.location.origin).replace(/\/+$/, '');
}

/** The value of WAU's ListPath for the customer (README, winget-autoupdate section). */
export function wauListPath(base: string, customerId: number, key: string): string {
  return `${base}${API}/customers/${customerId}/wau?api_key=${key}`;
}

export function WauLists({ customerId }: { customerId: number }) {
  const [shown, setShown] = useState<{ kind: ListKind; text: string } | null>(null);
  const { error, guard } = useActionError();
  const show = (kind: ListKind) =>
    guard(async () => {
      setShown({ kind, text: await apiText(`/customers/${customerId}/wau/${kind}`) });
    });
  const base = useServerBase();
  return (
    <div className="wau-lists">
      <p>
        winget-autoupdate on this customer&apos;s PCs: set its <strong>ListPath</strong> to
      </p>
      <p>
        <code data-testid="wau-list-path">{wauListPath(base, customerId, '<agent key>')}</code>
      </p>
      <p className="muted">
        with an agent key of this customer in place of <span className="mono">&lt;agent key&gt;</span>, such as its installer key (a new one is
        shown once, with this line filled in). WAU then downloads <span className="mono">…/wau/included_apps.txt?api_key=…</span> with a white
        list, else <span className="mono">excluded_apps.txt</span>. The lists, also at:
      </p>
      <ul>
        {LISTS.map((list) => (
          <li key={list.kind}>
            <code>{`${API}/customers/${customerId}/wau/${list.kind}`}</code> <span className="muted">({list.what}, its {list.file})</span>{' '}
            <button type="button" className="link" onClick={() => void show(list.kind)} aria-pressed={shown?.kind === list.kind}>
              Show
            </button>
          </li>
        ))}
      </ul>
      <ErrorBanner error={error} />
      {shown ? (
        <figure className="wau-list-text">
          <figcaption>
            {shown.kind} list as the PCs get it{' '}
            <button type="button" className="link" onClick={() => setShown(null)}>
              Hide
            </button>
          </figcaption>
          {shown.text.trim() === '' ? <p className="muted">Empty: no {shown.kind === 'included' ? 'allow' : 'block'} rules.</p> : <pre>{shown.text}</pre>}
        </figure>
      ) : null}
    </div>
  );
}
