// Creating or editing a notification channel: its name, type (fixed once created: the settings differ),
// owner (global, or one customer's), whether it is on, and its type's settings and secrets. The server
// checks the settings on save (an SMTP login, a URL's address); its answer appears beside the field it
// names, or above the buttons.
import { useEffect, useId, useRef, useState } from 'react';
import type { ApiMethod, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { CustomerOptions } from '../ui/customer-options';
import { useSubmit } from '../ui/use-submit';
import { CHANNEL_LABELS, CHANNEL_TYPES, type Channel, type ChannelType } from './alert-types';
import { ChannelFields, channelDraftOf, secretsFor, settingsFor, type ChannelDraft } from './channel-fields';
import { FieldError, fieldErrors, invalidProps } from './field-errors';
import type { Directory } from './use-directory';
import { FormFooter } from '../ui/form-footer';

interface Props {
  channel: Channel | null;
  directory: Directory;
  onSaved: () => void;
  onCancel: () => void;
}

/** A channel's body less its settings and secrets: their fields depend on the type (channel-fields.tsx). */
type ChannelBody<P extends '/notification-channels' | '/notification-channels/{id}', M extends 'post' | 'put'> = Omit<ApiRequest<P, M & ApiMethod<P>>, 'settings' | 'secrets'>;

export function ChannelForm({ channel, directory, onSaved, onCancel }: Props) {
  const [name, setName] = useState(channel?.name ?? '');
  const [type, setType] = useState<ChannelType>(channel?.type ?? 'webhook');
  const [customerId, setCustomerId] = useState(channel?.customer_id !== null && channel?.customer_id !== undefined ? String(channel.customer_id) : '');
  const [enabled, setEnabled] = useState(channel?.enabled ?? true);
  const [draft, setDraft] = useState<ChannelDraft>(() => channelDraftOf(channel));
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    void form.current?.scrollIntoView({ block: 'nearest' });
  }, []);

  const { busy, error, submit } = useSubmit(async () => {
    const body = {
      name: name.trim(),
      enabled,
      customer_id: customerId ? Number(customerId) : null,
      settings: settingsFor(type, draft),
      secrets: secretsFor(type, draft, channel !== null),
    };
    if (channel) await api<Channel>(`/notification-channels/${channel.id}`, { method: 'PUT', body: body satisfies ChannelBody<'/notification-channels/{id}', 'put'> });
    else await api<Channel>('/notification-channels', { method: 'POST', body: { ...body, type } satisfies ChannelBody<'/notification-channels', 'post'> });
    onSaved();
  });
  const errors = fieldErrors(error);

  return (
    <form ref={form} className="card alerting-form" onSubmit={(e) => void submit(e)} aria-label={channel ? `Edit channel ${channel.name}` : 'New channel'}>
      <h2>{channel ? `Edit channel “${channel.name}”` : 'New channel'}</h2>
      <div className="row">
        <div className="field grow">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="e.g. On-call webhook" {...invalidProps(errors, 'name', `${id}-name`)} />
          <FieldError errors={errors} field="name" id={`${id}-name`} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-type`}>Type</label>
          <select id={`${id}-type`} value={type} onChange={(e) => setType(e.target.value as ChannelType)} disabled={channel !== null} {...invalidProps(errors, 'type', `${id}-type`)}>
            {CHANNEL_TYPES.map((t) => (
              <option key={t} value={t}>
                {CHANNEL_LABELS[t]}
              </option>
            ))}
          </select>
          <FieldError errors={errors} field="type" id={`${id}-type`} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-owner`}>Owner</label>
          <select id={`${id}-owner`} value={customerId} onChange={(e) => setCustomerId(e.target.value)} {...invalidProps(errors, 'customer_id', `${id}-owner`)}>
            <CustomerOptions customers={directory.customers} emptyLabel="Global (any rule)" />
          </select>
          <FieldError errors={errors} field="customer_id" id={`${id}-owner`} />
        </div>
        <label className="inline">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
      </div>
      <ChannelFields id={id} type={type} draft={draft} onChange={setDraft} errors={errors} hints={channel?.secrets ?? null} />
      <FieldError errors={errors} field="settings" id={`${id}-settings`} exact />
      <FieldError errors={errors} field="secrets" id={`${id}-secrets`} exact />
      <FormFooter busy={busy} error={error} submitLabel={channel ? 'Save channel' : 'Create channel'} onCancel={onCancel} />
    </form>
  );
}
