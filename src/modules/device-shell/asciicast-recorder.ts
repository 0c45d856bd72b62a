// The recording of one device shell as an asciicast v2 file (https://docs.asciinema.org/manual/asciicast/v2/):
// a header line, then one JSON line per event — ["seconds", "o", text] for output, [seconds, "r",
// "COLSxROWS"] for a resize. Input is never recorded: what a technician types may be a password, and
// the shell's echo shows what a terminal showed anyway. The file is gzipped as it is written, to a
// temporary file, so a long session never sits in memory; the session stores it in the blob store at
// its end.
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { createGzip, type Gzip } from 'node:zlib';
import type { Clock } from '../../platform/clock.js';

export interface RecordingHeader {
  width: number;
  height: number;
  shell: string;
  title: string;
}

export class AsciicastRecorder {
  readonly #gzip: Gzip;
  readonly #file: WriteStream;
  readonly #done: Promise<void>;
  readonly #decoder = new StringDecoder('utf8');
  readonly #startedMs: number;
  #failed: Error | null = null;

  constructor(
    readonly path: string,
    header: RecordingHeader,
    private readonly clock: Clock,
  ) {
    this.#startedMs = clock.now().getTime();
    this.#gzip = createGzip();
    this.#file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    this.#gzip.pipe(this.#file);
    this.#done = new Promise((resolve) => {
      this.#file.once('close', resolve);
      const fail = (err: Error) => {
        this.#failed ??= err;
        resolve();
      };
      this.#file.once('error', fail);
      this.#gzip.once('error', fail);
    });
    this.#line({
      version: 2,
      width: header.width,
      height: header.height,
      timestamp: Math.floor(this.#startedMs / 1000),
      env: { TERM: 'xterm-256color', SHELL: header.shell },
      title: header.title,
    });
  }

  /** True while the compressor keeps up; false asks the caller to hold the output until `drained`. */
  output(bytes: Buffer): boolean {
    // A UTF-8 sequence split across frames is completed by the next one, never recorded as U+FFFD.
    const text = this.#decoder.write(bytes);
    return text === '' ? true : this.#line([this.#seconds(), 'o', text]);
  }

  resize(cols: number, rows: number): void {
    this.#line([this.#seconds(), 'r', `${cols}x${rows}`]);
  }

  /** Calls back once the compressor's buffer has room again. */
  drained(resume: () => void): void {
    this.#gzip.once('drain', resume);
  }

  /** Ends the file; resolves with its path, or rejects when it could not be written. */
  async finish(): Promise<string> {
    const rest = this.#decoder.end();
    if (rest) this.#line([this.#seconds(), 'o', rest]);
    this.#gzip.end();
    await this.#done;
    if (this.#failed) {
      await this.discard();
      throw this.#failed;
    }
    return this.path;
  }

  /** Removes the temporary file (after it was stored, or when the session is not kept). */
  async discard(): Promise<void> {
    this.#gzip.destroy();
    await rm(this.path, { force: true });
  }

  #seconds(): number {
    return Math.round(this.clock.now().getTime() - this.#startedMs) / 1000;
  }

  #line(value: unknown): boolean {
    if (this.#failed || this.#gzip.writableEnded) return true;
    return this.#gzip.write(`${JSON.stringify(value)}\n`);
  }
}
