// A channel's secrets: validated per field, merged on update (omitted keeps, null clears), sealed as one
// JSON object with the server's SecretBox, and shown only as hints. Secrets that say nothing about
// where they go stay bound to the settings that do (channel-kind.ts SecretField.boundTo).
import { z } from 'zod';
import { AppError, type ErrorDetail } from '../../platform/errors.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { ChannelKind, Secrets } from './channel-kind.js';

/** What a request says about secrets: a new value, null to clear, absent to keep. */
export type SecretsPatch = Readonly<Partial<Record<string, string | null>>>;

export function invalid(details: ErrorDetail[]): AppError {
  const first = details[0]!;
  return new AppError('VALIDATION_ERROR', `${first.path}: ${first.message}`, { details });
}

/** The zod issues of a part of the body (`settings`, `secrets.password`) as the contract's details. */
export function issuesOf(prefix: string, error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({ path: [prefix, ...issue.path.map(String)].join('.'), message: issue.message }));
}

/** The secrets after applying `patch` to `stored`; every value checked, required ones present. */
export function mergeSecrets(kind: ChannelKind, stored: Secrets, patch: SecretsPatch | undefined): Record<string, string> {
  const merged: Record<string, string> = {};
  const details: ErrorDetail[] = [];
  for (const name of Object.keys(patch ?? {})) {
    if (!Object.hasOwn(kind.secrets, name)) details.push({ path: `secrets.${name}`, message: 'is not a secret of this channel type' });
  }
  for (const [name, field] of Object.entries(kind.secrets)) {
    const given = patch?.[name];
    const value = given === undefined ? stored[name] : given;
    if (value === null || value === undefined) {
      if (field.required) details.push({ path: `secrets.${name}`, message: given === null ? 'is required and cannot be cleared' : 'is required' });
      continue;
    }
    const parsed = field.schema.safeParse(value);
    if (!parsed.success) details.push(...issuesOf(`secrets.${name}`, parsed.error));
    else merged[name] = parsed.data;
  }
  if (details.length > 0) throw invalid(details);
  return merged;
}

/**
 * Refuses to keep a stored secret whose destination changes (a new SMTP host, ntfy server or Bot API
 * URL): it must be given again, or a caller who cannot read it could have it sent to a server of theirs.
 */
export function requireRebound(kind: ChannelKind, before: Record<string, unknown>, after: Record<string, unknown>, stored: Secrets, patch: SecretsPatch | undefined): void {
  const details: ErrorDetail[] = [];
  for (const [name, field] of Object.entries(kind.secrets)) {
    if (!field.boundTo || stored[name] === undefined || patch?.[name] !== undefined) continue;
    const changed = field.boundTo.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
    if (changed.length > 0) {
      details.push({ path: `secrets.${name}`, message: `must be given again when settings.${changed.join(' or settings.')} changes` });
    }
  }
  if (details.length > 0) throw invalid(details);
}

/** Shown instead of a secret: a URL's origin and last 4 characters, a long token's first and last 4, else "set". */
export function secretHint(value: string, opaque = false): string {
  if (opaque || value.length < 20) return 'set';
  if (/^https?:\/\//i.test(value)) {
    try {
      return `${new URL(value).origin}/…${value.slice(-4)}`;
    } catch {
      return 'set';
    }
  }
  return `${value.slice(0, 4)}…${value.slice(-4)}`;
}

export function hintsOf(kind: ChannelKind, secrets: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(secrets).map(([name, value]) => [name, secretHint(value, kind.secrets[name]?.opaque)]));
}

export function seal(box: SecretBox, secrets: Record<string, string>): string | null {
  return Object.keys(secrets).length === 0 ? null : box.seal(JSON.stringify(secrets));
}

const SEALED_SHAPE = z.record(z.string(), z.string());

/** The stored secrets; throws when they cannot be opened (another ENCRYPTION_KEY) or are malformed. */
export function open(box: SecretBox, sealed: string | null): Record<string, string> {
  return sealed === null ? {} : SEALED_SHAPE.parse(JSON.parse(box.open(sealed)));
}
