// The bytes of an upload and a download, with progress and a way to stop.
// - Upload: the file's SHA-256 first (the agent refuses bytes that do not match it, so a broken
//   transfer never leaves a file), then PUT …/files/content with the raw bytes by XMLHttpRequest, the
//   only browser API that reports upload progress; abort() cancels it.
// - Download: GET …/files/content, streamed. Large files go straight to a file the user picks where the
//   browser can (File System Access), so they never sit in the page's memory; others are collected
//   into a Blob and handed to the browser's downloads.
import { apiErrorOf, apiResponse, apiUrl, saveBlob } from '../../api/client';
import { currentToken } from '../../api/session';
import { agentPath, type UploadAnswer } from '../device/device-types';
import { fileSha256 } from './file-hash';

export type Progress = (phase: 'hashing' | 'sending' | 'checking' | 'receiving', done: number, total: number | null) => void;

/** Thrown when the user cancelled. */
export class Cancelled extends Error {
  constructor() {
    super('Cancelled.');
    this.name = 'Cancelled';
  }
}

export async function uploadFile(agentId: string, path: string, file: File, overwrite: boolean, progress: Progress, signal: AbortSignal): Promise<UploadAnswer> {
  progress('hashing', 0, file.size);
  const sha256 = await fileSha256(file, (hashed) => progress('hashing', hashed, file.size), signal).catch((err: unknown) => {
    throw signal.aborted ? new Cancelled() : err;
  });
  if (signal.aborted) throw new Cancelled();
  const url = apiUrl(agentPath(agentId, '/files/content'), { path, sha256, overwrite: overwrite ? 'true' : undefined });
  const xhr = new XMLHttpRequest();
  return new Promise<UploadAnswer>((resolve, reject) => {
    const abort = () => xhr.abort();
    signal.addEventListener('abort', abort, { once: true });
    xhr.open('PUT', url);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    const token = currentToken();
    if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (event) => progress('sending', event.loaded, file.size);
    // Every byte is out: the agent now checks the hash and moves the file into place.
    xhr.upload.onload = () => progress('checking', file.size, file.size);
    xhr.onabort = () => reject(new Cancelled());
    xhr.onerror = () => reject(new Error('The upload was interrupted: the server could not be reached.'));
    xhr.onload = () => {
      signal.removeEventListener('abort', abort);
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as UploadAnswer);
      else void apiErrorOf(new Response(xhr.responseText, { status: xhr.status, statusText: xhr.statusText })).then(reject);
    };
    xhr.send(file);
  });
}

/** Files at least this large are streamed to disk where the browser lets the page pick a file. */
const STREAM_TO_DISK_MIN = 256 * 1024 ** 2;

interface FileSaver {
  showSaveFilePicker?: (options: { suggestedName: string }) => Promise<{ createWritable(): Promise<WritableStream<Uint8Array>> }>;
}

/**
 * Downloads `path` as `name`; `size` (from the listing) decides whether to ask for a file first, which
 * the browser allows only right after the click.
 */
export async function downloadFile(agentId: string, path: string, name: string, size: number, progress: Progress, signal: AbortSignal): Promise<void> {
  const picker = (window as FileSaver).showSaveFilePicker;
  const target = size >= STREAM_TO_DISK_MIN && picker ? await picker({ suggestedName: name }).then((handle) => handle.createWritable()) : null;
  try {
    const response = await apiResponse(agentPath(agentId, '/files/content'), { query: { path }, signal });
    const total = Number(response.headers.get('content-length')) || null;
    let received = 0;
    progress('receiving', 0, total);
    const counted = response.body!.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.length;
          progress('receiving', received, total);
          controller.enqueue(chunk);
        },
      }),
    );
    if (target) {
      await counted.pipeTo(target, { signal });
      return;
    }
    const blob = await new Response(counted).blob();
    if (total !== null && blob.size !== total) throw new Error(`The download ended early: ${blob.size} of ${total} bytes arrived.`);
    saveBlob(blob, name);
  } catch (err) {
    throw signal.aborted ? new Cancelled() : err;
  }
}
