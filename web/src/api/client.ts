// The one way the console talks to the server: JSON over fetch with the session's bearer token. Errors
// arrive as ApiError carrying the contract's error body; a 401 on a signed-in request ends the session
// (expired, or signed out elsewhere) so the user lands on the sign-in page with a message.
import { currentToken, endSession } from './session';

export const API = '/api/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    /** Validation errors: one entry per invalid field (`path` like "params.threshold"). */
    readonly details: readonly { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  signal?: AbortSignal;
  /** Sign-in requests: a 401 there is a wrong password, not an expired session. */
  anonymous?: boolean;
}

export function apiUrl(path: string, query?: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined && value !== '') params.set(key, String(value));
  const qs = params.toString();
  return `${API}${path}${qs ? `?${qs}` : ''}`;
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  return sendTo(apiUrl(path, options.query), options);
}

/** `url` is a same-origin path with its query (`/api/v1/…?…`), as a list's Link header gives it. */
async function sendTo(url: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = options.anonymous ? null : currentToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'NETWORK_ERROR', 'The server cannot be reached. Check the connection and try again.', undefined);
  }
  if (response.ok) return response;
  throw await apiErrorOf(response, options.anonymous);
}

/**
 * The contract's error of a failed answer (also one that came by XMLHttpRequest, for an upload's
 * progress). A 401 on a signed-in request ends the session.
 */
export async function apiErrorOf(response: Response, anonymous = false): Promise<ApiError> {
  const body = (await response.json().catch(() => null)) as { error?: string; code?: string; request_id?: string; details?: unknown } | null;
  const details = Array.isArray(body?.details)
    ? (body.details as unknown[]).filter((d): d is { path: string; message: string } => typeof (d as { path?: unknown })?.path === 'string' && typeof (d as { message?: unknown }).message === 'string')
    : [];
  const error = new ApiError(response.status, body?.code ?? `HTTP_${response.status}`, body?.error ?? response.statusText, body?.request_id, details);
  // INVALID_CREDENTIALS on a signed-in request is a wrong password or code the user just typed (2FA
  // confirm or disable), not a session that ended (UNAUTHORIZED).
  if (response.status === 401 && !anonymous && error.code !== 'INVALID_CREDENTIALS') endSession('Your session has ended. Please sign in again.');
  return error;
}

/** The answer itself, its body unread (a file's bytes, to stream), after the same checks as api(). */
export function apiResponse(path: string, options: RequestOptions = {}): Promise<Response> {
  return send(path, options);
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  return (await response.json()) as T;
}

/** One page of a list and the URL of the next (its `Link: <…>; rel="next"`), null after the last. */
export interface ListPage<T> {
  items: T[];
  next: string | null;
}

/** The next-page URL of a list answer: same origin, so only a path under the API is taken. */
function nextPageUrl(response: Response): string | null {
  const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(response.headers.get('link') ?? '');
  const url = match?.[1];
  return url && url.startsWith(`${API}/`) ? url : null;
}

/** A page of a list: the first (`path` with `query`, which should hold `limit`). */
export async function apiPage<T>(path: string, options: RequestOptions = {}): Promise<ListPage<T>> {
  const response = await send(path, options);
  return { items: (await response.json()) as T[], next: nextPageUrl(response) };
}

/** The page a previous page's `next` points to, with another page size if given. */
export async function apiNextPage<T>(next: string, options: { limit?: number; signal?: AbortSignal } = {}): Promise<ListPage<T>> {
  const url = new URL(next, window.location.origin);
  if (options.limit !== undefined) url.searchParams.set('limit', String(options.limit));
  const response = await sendTo(`${url.pathname}${url.search}`, { signal: options.signal });
  return { items: (await response.json()) as T[], next: nextPageUrl(response) };
}

/** A non-JSON answer (a backup's XML, a text list). */
export async function apiText(path: string, options: RequestOptions = {}): Promise<string> {
  return (await send(path, options)).text();
}

/** Hands the browser a file to save, made from text the console already holds. */
export function saveFile(name: string, text: string, type: string): void {
  saveBlob(new Blob([text], { type }), name);
}

/** Hands the browser bytes to save under `name` (a file downloaded from a device). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // Large blobs take a while to be written out; the URL must live until then.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
