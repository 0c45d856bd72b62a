// The customer's rules for winget-autoupdate (WAU) on its Windows PCs: which winget packages are updated
// automatically (allow) and which never (block). Beside the rules, the software its agents report, from
// which a rule can be started.
import { useMemo, useRef, useState, type RefObject } from 'react';
import { Allowed } from '../auth/access';
import type { ApiItem } from '../api/api-types';
import { api } from '../api/client';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { SoftwareInventory, type WauInventoryItem } from './software-inventory';
import { WauLists } from './wau-lists';
import { useSubmit } from '../ui/use-submit';
import { TableFrame } from '../ui/table-frame';

/** A rule: a winget package id ("*" a wildcard) updated automatically (allow) or never (block). */
export type WauRule = ApiItem<'/customers/{id}/wau/rules'>;
export type WauAction = WauRule['action'];

interface RuleDraft {
  packageId: string;
  displayName: string;
  action: WauAction;
}

const EMPTY_DRAFT: RuleDraft = { packageId: '', displayName: '', action: 'allow' };
// The server's pattern (winget ids; "*" a wildcard), written for the browser's `v`-mode pattern attribute.
const PACKAGE_ID_PATTERN = String.raw`(?![.\-])[A-Za-z0-9._+*\-]{1,128}`;

export function WauSection({ customerId }: { customerId: number }) {
  const rules = useResource((signal) => api<WauRule[]>(`/customers/${customerId}/wau/rules`, { signal }), [customerId]);
  // The form's content lives here so an inventory row can fill it in; it survives a failed submit.
  const [draft, setDraft] = useState<RuleDraft>(EMPTY_DRAFT);
  const packageIdInput = useRef<HTMLInputElement>(null);
  const startRuleFor = (softwareName: string, action: WauAction) => {
    // The inventory knows programs by their display name, not by winget id: the technician adds the id.
    setDraft((d) => ({ ...d, displayName: softwareName, action }));
    packageIdInput.current?.focus();
  };
  // Rules name packages by winget id, the inventory by display name: a rule whose display name is the
  // program's name is the best match there is, and shown so the same rule is not started twice.
  const ruleByName = useMemo(() => new Map((rules.data ?? []).map((r) => [r.display_name.toLowerCase(), r])), [rules.data]);
  const inventoryActions = (item: WauInventoryItem) => <InventoryActions item={item} rule={ruleByName.get(item.name.toLowerCase())} onStartRule={startRuleFor} />;
  return (
    <section className="wau" aria-label="Windows software updates">
      <h2>Windows software updates</h2>
      <WauLists customerId={customerId} />
      <div className="wau-layout">
        <div className="wau-rules">
          <h3>Rules</h3>
          <ErrorBanner error={rules.error} />
          {rules.data ? <RulesTable customerId={customerId} rules={rules.data} onDeleted={rules.reload} /> : !rules.error && <Loading />}
          <Allowed need="write">
            <AddRuleForm
              customerId={customerId}
              draft={draft}
              onChange={setDraft}
              packageIdInput={packageIdInput}
              onAdded={() => {
                setDraft(EMPTY_DRAFT);
                rules.reload();
              }}
            />
          </Allowed>
        </div>
        <SoftwareInventory customerId={customerId} actionsFor={inventoryActions} />
      </div>
    </section>
  );
}

function RulesTable({ customerId, rules, onDeleted }: { customerId: number; rules: WauRule[]; onDeleted: () => void }) {
  const { error, guard } = useActionError();
  const remove = (rule: WauRule) => guard(async () => {
    await api(`/customers/${customerId}/wau/rules`, { method: 'DELETE', query: { id: rule.id } });
    onDeleted();
  });
  if (rules.length === 0) return <Empty>No rules yet: winget-autoupdate uses its own defaults.</Empty>;
  return (
    <>
      <ErrorBanner error={error} />
      <TableFrame label="WAU list entries">
        <table data-testid="wau-rules-table" className="stack">
          <thead>
            <tr>
              <th>Package id</th>
              <th>Display name</th>
              <th>Action</th>
              <th>Added</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {rules.map((rule) => (
              <tr key={rule.id} data-testid="wau-rule-row">
                <td data-label="Package id" className="mono">{rule.package_id}</td>
                <td data-label="Display name">{rule.display_name}</td>
                <td data-label="Action">
                  <ActionBadge action={rule.action} />
                </td>
                <td data-label="Added">
                  <RelativeTime iso={rule.created_at} />
                </td>
                <td>
                  <Allowed need="write">
                    <ConfirmButton label="Delete" question={`Delete the rule for ${rule.package_id}?`} busyLabel="Deleting…" onConfirm={() => remove(rule)} />
                  </Allowed>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableFrame>
    </>
  );
}

function ActionBadge({ action }: { action: WauAction }) {
  return action === 'allow' ? <Badge tone="good">allow</Badge> : <Badge tone="bad">block</Badge>;
}

/** An inventory row's rule (when one matches) and the buttons that start one for the program. */
function InventoryActions({ item, rule, onStartRule }: { item: WauInventoryItem; rule: WauRule | undefined; onStartRule: (softwareName: string, action: WauAction) => void }) {
  return (
    <>
      {rule && <ActionBadge action={rule.action} />}
      {/* They fill in the rule form, which read users do not have. */}
      <Allowed need="write">
        <button type="button" onClick={() => onStartRule(item.name, 'allow')}>
          Allow
        </button>
        <button type="button" onClick={() => onStartRule(item.name, 'block')}>
          Block
        </button>
      </Allowed>
    </>
  );
}

function AddRuleForm({
  customerId,
  draft,
  onChange,
  packageIdInput,
  onAdded,
}: {
  customerId: number;
  draft: RuleDraft;
  onChange: (draft: RuleDraft) => void;
  packageIdInput: RefObject<HTMLInputElement | null>;
  onAdded: () => void;
}) {
  const { busy, error, submit } = useSubmit(async () => {
    const displayName = draft.displayName.trim();
    const body = { action: draft.action, package_id: draft.packageId.trim(), ...(displayName ? { display_name: displayName } : {}) };
    await api<WauRule>(`/customers/${customerId}/wau/rules`, { method: 'POST', body });
    onAdded();
  });
  return (
    <form className="card wau-add" onSubmit={(e) => void submit(e)} aria-label="Add a rule">
      <h3>Add a rule</h3>
      <div className="row">
        <label>
          Package id
          <input
            ref={packageIdInput}
            className="mono"
            value={draft.packageId}
            onChange={(e) => onChange({ ...draft, packageId: e.target.value })}
            required
            maxLength={128}
            pattern={PACKAGE_ID_PATTERN}
            title="A winget package id such as Mozilla.Firefox: letters, digits and . _ + - (not first), * as a wildcard"
            placeholder="Mozilla.Firefox"
          />
        </label>
        <label>
          Display name (optional)
          <input value={draft.displayName} onChange={(e) => onChange({ ...draft, displayName: e.target.value })} maxLength={200} placeholder="Firefox" />
        </label>
        <label>
          Action
          <select value={draft.action} onChange={(e) => onChange({ ...draft, action: e.target.value as WauAction })}>
            <option value="allow">Allow updates</option>
            <option value="block">Block updates</option>
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Adding…' : 'Add rule'}
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
