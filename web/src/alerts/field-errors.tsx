// The server's validation errors beside the fields they are about: a 400's details[].path
// ("params.threshold", "settings.to.1", "channel_ids") is matched to the form's field names, so the user
// sees what to fix where they type it. Paths no field claims stay in the form's banner.
import { ApiError } from '../api/client';

export type FieldErrors = ReadonlyMap<string, string>;

/** path → message of a failed save; empty for any other error. */
export function fieldErrors(error: unknown): FieldErrors {
  const map = new Map<string, string>();
  if (!(error instanceof ApiError)) return map;
  for (const d of error.details) if (!map.has(d.path)) map.set(d.path, d.message);
  return map;
}

/** The message for a field: its own path, or a path inside it ("settings.to.1" for "settings.to"). */
export function errorFor(errors: FieldErrors, field: string, exact = false): string | undefined {
  for (const [path, message] of errors) if (path === field || (!exact && path.startsWith(`${field}.`))) return message;
  return undefined;
}

/** The props an input needs to say it is invalid and which text says why. */
export function invalidProps(errors: FieldErrors, field: string, id: string): { 'aria-invalid'?: true; 'aria-describedby'?: string } {
  return errorFor(errors, field) ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

/** `exact`: only errors about the field as a whole ("params"), not those a field inside it shows. */
export function FieldError({ errors, field, id, exact }: { errors: FieldErrors; field: string; id: string; exact?: boolean }) {
  const message = errorFor(errors, field, exact);
  if (!message) return null;
  return (
    <small id={`${id}-error`} className="field-error" data-testid="field-error" data-field={field}>
      {message}
    </small>
  );
}
