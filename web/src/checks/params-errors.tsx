// Every error the server gave about one check's params ("checks.2.params.port" → "port: …"), under
// the params box: one box holds many fields, so each message names its field.
import { type FieldErrors } from '../alerts/field-errors';

export function ParamsErrors({ errors, field, id }: { errors: FieldErrors; field: string; id: string }) {
  const messages = [...errors].filter(([path]) => path === field || path.startsWith(`${field}.`));
  if (messages.length === 0) return null;
  return (
    <ul id={`${id}-error`} className="field-error params-errors" data-testid="field-error" data-field={field}>
      {messages.map(([path, message]) => (
        <li key={path}>{path === field ? message : `${path.slice(field.length + 1)}: ${message}`}</li>
      ))}
    </ul>
  );
}
