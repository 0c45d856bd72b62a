// The software on the customer's Windows agents, one row per program and publisher with how many agents
// have which version. Names and publishers come from the agents (untrusted): rendered as text only. What
// a row offers (the matching rule, Allow and Block) is the rules' business: wau-rules.tsx passes it in.
import { useMemo, useState, type ReactNode } from 'react';
import type { ApiItem } from '../api/api-types';
import { api } from '../api/client';
import { ActionsHeader, Empty, ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { TableFrame } from '../ui/table-frame';

/** A program on the customer's Windows agents, newest version first ("" where the program names none). */
export type WauInventoryItem = ApiItem<'/customers/{id}/wau/inventory'>;

const REFRESH_MS = 60_000;
const VERSIONS_SHOWN = 3;

export function SoftwareInventory({ customerId, actionsFor }: { customerId: number; actionsFor: (item: WauInventoryItem) => ReactNode }) {
  const inventory = useResource((signal) => api<WauInventoryItem[]>(`/customers/${customerId}/wau/inventory`, { signal }), [customerId], {
    refreshMs: REFRESH_MS,
  });
  const [filter, setFilter] = useState('');
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const all = inventory.data ?? [];
    return needle ? all.filter((i) => i.name.toLowerCase().includes(needle) || i.publisher.toLowerCase().includes(needle)) : all;
  }, [inventory.data, filter]);

  return (
    <div className="wau-inventory">
      <h3>Software on the Windows agents {inventory.data && <span className="muted">({inventory.data.length})</span>}</h3>
      <p className="muted">Agents report programs by name, not by winget id: Allow and Block fill in the rule form; add the package id there.</p>
      <div className="row" role="search">
        <label>
          Filter software
          <input type="search" placeholder="Name or publisher" value={filter} onChange={(e) => setFilter(e.target.value)} maxLength={200} />
        </label>
      </div>
      <ErrorBanner error={inventory.error} />
      {!inventory.data ? (
        !inventory.error && <Loading />
      ) : shown.length === 0 ? (
        <Empty>{filter.trim() ? 'No program matches.' : 'No software reported yet by this customer’s Windows agents.'}</Empty>
      ) : (
        <TableFrame label="Software inventory">
          <table data-testid="inventory-table" className="stack">
            <thead>
              <tr>
                <th>Name</th>
                <th>Version</th>
                <th>Publisher</th>
                <th className="num">Agents</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {shown.map((item) => (
                <tr key={`${item.name}\u0000${item.publisher}`} data-testid="inventory-row">
                  <td>{item.name}</td>
                  <td data-label="Version">
                    <Versions versions={item.versions} />
                  </td>
                  <td data-label="Publisher">{item.publisher || <span className="muted">–</span>}</td>
                  <td data-label="Agents" className="num">{item.agent_count}</td>
                  <td>
                    <div className="inventory-actions">{actionsFor(item)}</div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
    </div>
  );
}

/** The newest few versions with their agent counts; the rest on hover, so a row stays one line or two. */
function Versions({ versions }: { versions: WauInventoryItem['versions'] }) {
  const label = (v: WauInventoryItem['versions'][number]) => `${v.version || 'unknown'} (${v.agent_count})`;
  const rest = versions.slice(VERSIONS_SHOWN);
  return (
    <span className="wau-versions mono">
      {versions.slice(0, VERSIONS_SHOWN).map((v) => (
        <span key={v.version}>{label(v)}</span>
      ))}
      {rest.length > 0 && (
        <span className="muted" title={rest.map(label).join(', ')}>
          +{rest.length} more
        </span>
      )}
    </span>
  );
}
