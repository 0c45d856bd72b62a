// The reference agent's file streams (issue 59). fs_read answers the file's size, then sends it from
// `offset` in 256 KiB frames (pausing while the server or the WebSocket is full) and ends with the
// bytes and SHA-256 it sent. fs_write writes what comes to a temporary file beside the target
// (`.<name>.rmm-part-<random>`), stops reading the WebSocket while the disk lags, and after exactly
// `size` bytes renames it over the target only if the SHA-256 matches; anything else removes it.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream, type WriteStream } from 'node:fs';
import { lstat, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import { CommandError } from '../commands/command-error.js';
import type { CommandContext } from '../commands/types.js';
import type { StreamPort } from '../device-streams.js';
import { noClobberMove } from './fs-commands.js';
import { checkedPath, FS_ERROR_PREFIXES, fsError } from './fs-paths.js';

const FRAME_BYTES = 256 * 1024;
/** Bytes the write stream may hold before the WebSocket stops being read. */
const WRITE_HIGH_WATER = 1024 * 1024;

function streamsOf(ctx: CommandContext) {
  if (!ctx.streams) throw new CommandError('files are not supported by this agent version');
  return ctx.streams;
}

export async function fsRead(params: CommandParams<'fs_read'>, ctx: CommandContext) {
  const streams = streamsOf(ctx);
  const target = checkedPath(params.path);
  const offset = params.offset ?? 0;
  const handle = await open(target, 'r').catch((err: unknown) => {
    throw fsError(err, target);
  });
  let answer: { size: number; modified_at: string };
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new CommandError(`${FS_ERROR_PREFIXES.isDir} ${target} is not a regular file`);
    if (offset > stats.size) throw new CommandError(`invalid offset: ${offset} is past the end of ${target} (${stats.size} bytes)`);
    answer = { size: stats.size, modified_at: stats.mtime.toISOString() };
    await streams.open(params.session_id, async (port) => readHandler(port, createReadStream('', { fd: handle, start: offset, highWaterMark: FRAME_BYTES })));
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw fsError(err, target);
  }
  return answer;
}

function readHandler(port: StreamPort, source: ReadStream) {
  const hash = createHash('sha256');
  let bytes = 0;
  let started = false;
  let paused = false;
  source.on('data', (chunk) => {
    const buffer = chunk as Buffer;
    hash.update(buffer);
    bytes += buffer.length;
    port.send(buffer);
  });
  source.on('end', () => port.close({ bytes, sha256: hash.digest('hex') }));
  source.on('error', (err) => port.close({ error: `read failed: ${err.message}`, bytes }));
  source.pause();
  // The answer goes out first; the bytes follow it.
  setImmediate(() => {
    started = true;
    if (!paused) source.resume();
  });
  return {
    data: () => undefined,
    pause: () => {
      paused = true;
      source.pause();
    },
    resume: () => {
      paused = false;
      if (started && !source.destroyed) source.resume();
    },
    destroy: () => source.destroy(),
  };
}

export async function fsWrite(params: CommandParams<'fs_write'>, ctx: CommandContext) {
  const streams = streamsOf(ctx);
  const target = checkedPath(params.path);
  const existing = await lstat(target).catch(() => null);
  if (existing?.isDirectory()) throw new CommandError(`${FS_ERROR_PREFIXES.isDir} ${target}`);
  if (existing && !params.overwrite) throw new CommandError(`${FS_ERROR_PREFIXES.exists} ${target} (overwrite not asked)`);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.rmm-part-${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, 'wx').catch((err: unknown) => {
    throw fsError(err, path.dirname(target));
  });
  const sink = createWriteStream('', { fd: handle, highWaterMark: WRITE_HIGH_WATER });
  try {
    await streams.open(params.session_id, async (port) => writeHandler(port, sink, { ...params, target, temp }));
  } catch (err) {
    sink.destroy();
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  return {};
}

interface WriteJob {
  target: string;
  temp: string;
  size: number;
  sha256: string;
  overwrite?: boolean | undefined;
}

function writeHandler(port: StreamPort, sink: WriteStream, job: WriteJob) {
  const hash = createHash('sha256');
  let received = 0;
  let done = false;
  const removeTemp = () => {
    sink.destroy();
    void unlink(job.temp).catch(() => undefined);
  };
  const fail = (error: string) => {
    if (done) return;
    done = true;
    removeTemp();
    port.close({ error, bytes: received });
  };
  const finish = () => {
    done = true;
    const sha256 = hash.digest('hex');
    if (sha256 !== job.sha256) {
      done = false;
      return fail(`${FS_ERROR_PREFIXES.mismatch} the ${received} bytes received hash to ${sha256}, not ${job.sha256}; nothing was written`);
    }
    sink.end(() => {
      const place = job.overwrite ? rename(job.temp, job.target) : noClobberMove(job.temp, job.target);
      place.then(
        () => port.close({ bytes: received, sha256 }),
        (err: unknown) => {
          void unlink(job.temp).catch(() => undefined);
          port.close({ error: fsError(err, job.target).message, bytes: received });
        },
      );
    });
  };
  sink.on('error', (err) => fail(`write failed: ${fsError(err, job.target).message}`));
  // An empty file is complete as soon as the answer went out.
  if (job.size === 0) setImmediate(finish);
  return {
    data(payload: Buffer) {
      if (done) return;
      received += payload.length;
      if (received > job.size) return fail(`more bytes than the announced size ${job.size}; nothing was written`);
      hash.update(payload);
      if (!sink.write(payload)) {
        port.holdInbound(true);
        sink.once('drain', () => port.holdInbound(false));
      }
      if (received === job.size) finish();
    },
    pause: () => undefined,
    resume: () => undefined,
    destroy() {
      if (done) return;
      done = true;
      removeTemp();
    },
  };
}

/** fs_cancel: the server abandons a read or write; a partial write leaves no file. An unknown id is no error (it may have just ended). */
export async function fsCancel(params: CommandParams<'fs_cancel'>, ctx: CommandContext) {
  streamsOf(ctx).end(params.session_id);
  return {};
}
