// The request and answer shapes of the device files API (issue 59), shared by its routes.
import { z } from 'zod';
import { fileEntrySchema, FS_LIST_MAX_LIMIT } from '../agent-hub/device-protocol.js';

export const tags = ['devices'];

/** A path on the device as the API takes it; the agent checks the rest (absolute, no `..`). */
export const devicePath = z
  .string()
  .min(1)
  .max(4096)
  // The agent refuses what is not absolute, a NUL byte and `..` segments: it is the one place that decides.
  .describe('An absolute path on the device (`/etc/hosts`, `C:\\Temp\\a.txt`); `..` segments and NUL bytes are refused by the agent');

export const listQuery = z.object({
  path: devicePath,
  cursor: z.string().max(8192).optional().describe("The previous page's next_cursor"),
  limit: z.coerce.number().int().min(1).max(FS_LIST_MAX_LIMIT).default(1000),
});

const entry = fileEntrySchema.extend({ link_target: z.string().nullable() });
export const listAnswer = z.object({
  path: z.string(),
  entries: z.array(entry),
  next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  total: z.number().int().nullable().describe('Entries in the directory, when the agent counts them'),
});
export const statAnswer = entry.extend({ path: z.string() });

export const pathQuery = z.object({ path: devicePath });
export const boolText = z.enum(['true', 'false']).default('false');
export const deleteQuery = z.object({ path: devicePath, recursive: boolText.describe('A non-empty directory is removed only with true') });
export const renameBody = z.object({ from: devicePath, to: devicePath, overwrite: z.boolean().default(false) });
export const uploadQuery = z.object({
  path: devicePath,
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits').describe('SHA-256 of the whole body; the file appears only when it matches'),
  overwrite: boolText.describe('Replace an existing file (else 409)'),
});
export const uploadAnswer = z.object({ path: z.string(), size: z.number().int(), sha256: z.string() });
export const pathAnswer = z.object({ path: z.string() });
export const deletedAnswer = z.object({ path: z.string(), deleted: z.literal(true) });
export const renameAnswer = z.object({ from: z.string(), to: z.string() });

/** What every description of these routes says about who may and what fails. */
export const ACCESS_NOTE =
  'Needs write or admin (read users: 403); API keys only while the setting device_api_keys is on (403 otherwise); an agent outside the caller\'s customer scope is 404. ' +
  'The agent must announce the `files` capability (409 AGENT_UNSUPPORTED) and be connected (409 AGENT_NOT_CONNECTED). ' +
  "The agent's errors: an invalid path (relative, NUL byte, a `..` segment) → 400 VALIDATION_ERROR, not found → 404, exists / not empty / not a directory → 409 CONFLICT, permission denied → 403, others → 502 AGENT_ERROR with the agent's text.";
