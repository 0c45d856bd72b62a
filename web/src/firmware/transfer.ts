// Requests api() cannot make: an upload whose progress the page shows (fetch reports none for request
// bodies, XMLHttpRequest does), and a binary download that needs the bearer token (a plain link carries
// no Authorization header, and a token in the URL would end up in the history). Errors become the same
// ApiError the rest of the console shows, and a refused session ends it, as api() does.
import { ApiError, apiUrl, type RequestOptions } from '../api/client';
import { currentToken, endSession } from '../api/session';

export interface UploadRequest {
  path: string;
  query?: RequestOptions['query'];
  body: Blob;
  /** The API takes the raw bytes, not multipart: the type is the route's, not the file's own. */
  contentType: string;
  /** More request headers (a firmware's signature). */
  headers?: Record<string, string>;
  onProgress: (fraction: number) => void;
  signal?: AbortSignal;
}

function responseError(status: number, statusText: string, text: string, requestId: string | null): ApiError {
  type ErrorBody = { error?: string; code?: string; request_id?: string };
  let body: ErrorBody | null = null;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not the contract's JSON body (a proxy's page): the status text has to do.
  }
  const error = new ApiError(status, body?.code ?? `HTTP_${status}`, body?.error ?? (statusText || `HTTP ${status}`), body?.request_id ?? requestId ?? undefined);
  if (status === 401 && error.code !== 'INVALID_CREDENTIALS') endSession('Your session has ended. Please sign in again.');
  return error;
}

function authHeaders(accept: string): Record<string, string> {
  const token = currentToken();
  return token ? { accept, authorization: `Bearer ${token}` } : { accept };
}

export function uploadWithProgress<T>(request: UploadRequest): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', apiUrl(request.path, request.query));
    for (const [name, value] of Object.entries(authHeaders('application/json'))) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('content-type', request.contentType);
    for (const [name, value] of Object.entries(request.headers ?? {})) xhr.setRequestHeader(name, value);
    // Chromium may skip the upload's final progress and load events, or deliver a stale progress
    // event after the answer: the bar only moves forward, and a success completes it (the server
    // answers 201 only after the whole body).
    let sent = 0;
    const progress = (fraction: number) => {
      if (fraction <= sent) return;
      sent = fraction;
      request.onProgress(fraction);
    };
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) progress(event.loaded / event.total);
    };
    xhr.upload.onload = () => progress(1);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        progress(1);
        try {
          resolve(JSON.parse(xhr.responseText) as T);
        } catch {
          reject(new ApiError(xhr.status, 'BAD_RESPONSE', 'The server accepted the upload but its answer could not be read.', undefined));
        }
        return;
      }
      reject(responseError(xhr.status, xhr.statusText, xhr.responseText, xhr.getResponseHeader('x-request-id')));
    };
    // The server closes the connection when it refuses a body part-way (too large, version exists), and
    // the browser may then report only a network error, without the answer.
    xhr.onerror = () =>
      reject(new ApiError(0, 'NETWORK_ERROR', 'The upload was cut off before the server answered: the server is unreachable, or it refused the file part-way (too large, or that version already exists).', undefined));
    xhr.onabort = () => reject(new DOMException('The upload was cancelled.', 'AbortError'));
    if (request.signal?.aborted) return reject(new DOMException('The upload was cancelled.', 'AbortError'));
    request.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(request.body);
  });
}

/** `attachment; filename="x.zip"` → x.zip (only the plain form: the server sends no other). */
function fileNameFrom(disposition: string | null): string | undefined {
  const name = /filename="([^"]+)"/.exec(disposition ?? '')?.[1];
  // Never let a header choose a path: only the last segment.
  return name?.split(/[\\/]/).pop() || undefined;
}

/** Fetches a binary with the session's token and hands it to the browser to save. */
export async function downloadWithToken(path: string, query: RequestOptions['query'], fallbackName: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(apiUrl(path, query), { headers: authHeaders('application/zip, application/octet-stream, application/json') });
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'The server cannot be reached. Check the connection and try again.', undefined);
  }
  if (!response.ok) throw responseError(response.status, response.statusText, await response.text().catch(() => ''), response.headers.get('x-request-id'));
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = fileNameFrom(response.headers.get('content-disposition')) ?? fallbackName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
