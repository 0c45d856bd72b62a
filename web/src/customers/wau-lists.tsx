// The two lists winget-autoupdate downloads for this customer, as the PCs get them: the path to give
// WAU, and the list's current text on request. A plain link would not do: the console's token is not
// a cookie, so the browser would fetch the list unauthenticated.
import { useState } from 'react';
import { API, apiText } from '../api/client';
import { useActionError } from '../ui/use-action-error';
import { ErrorBanner } from '../ui/widgets';

const LISTS = [
  { kind: 'included', file: 'included_apps.txt', what: 'allowed package ids' },
  { kind: 'excluded', file: 'excluded_apps.txt', what: 'blocked package ids' },
] as const;

type ListKind = (typeof LISTS)[number]['kind'];

export function WauLists({ customerId }: { customerId: number }) {
  const [shown, setShown] = useState<{ kind: ListKind; text: string } | null>(null);
  const { error, guard } = useActionError();
  const show = (kind: ListKind) =>
    guard(async () => {
      setShown({ kind, text: await apiText(`/customers/${customerId}/wau/${kind}`) });
    });
  return (
    <div className="wau-lists">
      <p className="muted">winget-autoupdate on this customer&apos;s PCs downloads its lists with an agent API key:</p>
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
