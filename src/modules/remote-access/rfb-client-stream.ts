// Follows the client's half of an RFB session (VNC, RFC 6143) through a tunnel, so the server can tell the
// viewer's input (keys, pointer, clipboard, resizing) from its requests for pixels: a view-only desktop
// drops the input, and every desktop learns when its user last did something (the idle timeout).
//
// Only a message's header is ever held (at most 12 bytes): once its type and size are known, its bytes
// stream on or are dropped as they arrive, so a hostile client's 2 GiB clipboard costs nothing to hold.
// Of the server's bytes only the first 16 are looked at (RFB 3.3's security type decides what the client
// sends next); after that fromTarget returns at once. Security types other than None and VNC
// Authentication (TLS, Tight, RA2…) make the rest unreadable: a view-only session then ends, any other
// goes on unfollowed and counts as input throughout.
import type { SessionWatch } from '../tunnels/tunnel-session.js';

export interface RfbClientStreamOptions {
  viewOnly: boolean;
  /** Called (at most once per client chunk) when the client sent input. */
  onInput?: () => void;
}

const SECURITY_NONE = 1;
const SECURITY_VNC_AUTH = 2;
/** The ExtendedMouseButtons pseudo-encoding: once in the client's SetEncodings, a PointerEvent with the marker bit set is 7 bytes. */
const EXTENDED_MOUSE_BUTTONS = -316;
/** measure()'s answer for bytes that cannot be framed. */
const UNFRAMEABLE = Number.NaN;

/**
 * How one client message is framed. `size` gets the header's first `have` bytes (at least the type byte)
 * and answers the whole message's size, or minus the header bytes it needs to tell, or UNFRAMEABLE.
 */
interface MessageKind {
  size(h: Buffer, have: number, extendedPointer: boolean): number;
  input: (h: Buffer) => boolean;
}

const always = () => true;
const never = () => false;
const fixed = (size: number, input: (h: Buffer) => boolean): MessageKind => ({ size: () => size, input });
/** A header of `header` bytes whose contents give the size. */
const sized = (header: number, size: (h: Buffer) => number, input: (h: Buffer) => boolean): MessageKind => ({
  size: (h, have) => (have < header ? -header : size(h)),
  input,
});

/** QEMU client messages: 0 is the extended key event, 1 audio control (10 bytes for "set format", else 4). */
function qemuSize(h: Buffer, have: number): number {
  if (have < 2) return -2;
  if (h[1] === 0) return 12;
  if (h[1] !== 1) return UNFRAMEABLE;
  if (have < 4) return -4;
  return h.readUInt16BE(2) === 2 ? 10 : 4;
}

/** Every client message noVNC 1.7 sends (core/rfb.js, RFB.messages), and the others RFC 6143 lists. */
const MESSAGES = new Map<number, MessageKind>([
  [0, fixed(20, never)], // SetPixelFormat
  [2, sized(4, (h) => 4 + 4 * h.readUInt16BE(2), never)], // SetEncodings
  [3, fixed(10, never)], // FramebufferUpdateRequest
  [4, fixed(8, always)], // KeyEvent
  [5, { size: (h, have, ext) => (have < 2 ? -2 : ext && h[1]! & 0x80 ? 7 : 6), input: always }], // PointerEvent
  // ClientCutText; a negative length is the Extended Clipboard form, its size the absolute value.
  [6, sized(8, (h) => 8 + Math.abs(h.readInt32BE(4)), always)],
  [150, fixed(10, never)], // EnableContinuousUpdates
  [248, sized(9, (h) => 9 + h[8]!, never)], // ClientFence
  [250, fixed(4, always)], // xvp (shutdown, reboot, reset)
  [251, sized(8, (h) => 8 + 16 * h[6]!, always)], // SetDesktopSize
  [255, { size: qemuSize, input: (h) => h[1] === 0 }],
]);

/**
 * The size of the client message whose first `have` bytes are in `h` (at least the type byte): its whole
 * size, or minus the header bytes needed to tell, or NaN for a type or subtype it does not know.
 */
export function clientMessageSize(h: Buffer, have: number, extendedPointer = false): number {
  return MESSAGES.get(h[0]!)?.size(h, have, extendedPointer) ?? UNFRAMEABLE;
}

type Phase = 'version' | 'await-type' | 'choice' | 'auth' | 'init' | 'messages' | 'stuck';

export class RfbClientStream implements SessionWatch {
  readonly #viewOnly: boolean;
  readonly #onInput: () => void;
  #phase: Phase = 'version';
  /** RFB 3.3: the server picks the security type (bytes 12–15 of its stream) instead of the client. */
  #v33 = false;
  /** Why the stream cannot be followed once #phase is 'stuck'. */
  #reason = '';
  /** Nothing is followed any more: every client byte passes and counts as input. */
  #raw = false;
  /** The current message's header, and how much of it has arrived. */
  readonly #hdr = Buffer.alloc(12);
  #have = 0;
  /** Bytes of the current message still to come after its header, and whether they are dropped. */
  #left = 0;
  #dropping = false;
  /** The client announced ExtendedMouseButtons; SetEncodings' body is read 4 bytes at a time for it. */
  #extendedPointer = false;
  #scanningEncodings = false;
  readonly #encoding = Buffer.alloc(4);
  #encodingHave = 0;
  /** The server's first 16 bytes: its ProtocolVersion and, in RFB 3.3, its security type. */
  readonly #server = Buffer.alloc(16);
  #serverHave = 0;

  constructor(options: RfbClientStreamOptions) {
    this.#viewOnly = options.viewOnly;
    this.#onInput = options.onInput ?? (() => undefined);
  }

  /** Client bytes held back while a message header is incomplete (never more than 12). */
  get heldBytes(): number {
    return this.#have;
  }

  fromTarget(chunk: Buffer): void {
    if (this.#serverHave >= 16) return;
    const take = Math.min(16 - this.#serverHave, chunk.length);
    chunk.copy(this.#server, this.#serverHave, 0, take);
    this.#serverHave += take;
    if (this.#serverHave === 16 && this.#phase === 'await-type') this.#serverChose();
  }

  fromClient(chunk: Buffer): Buffer {
    if (this.#raw) {
      if (chunk.length > 0) this.#onInput();
      return chunk;
    }
    const out: Buffer[] = [];
    let input = false;
    let runStart = 0; // start of the bytes of `chunk` kept and not yet in `out`
    let i = 0;
    while (i < chunk.length) {
      if (this.#left > 0) {
        const n = Math.min(this.#left, chunk.length - i);
        if (this.#scanningEncodings) this.#scanEncodings(chunk, i, i + n);
        if (this.#dropping) {
          if (i > runStart) out.push(chunk.subarray(runStart, i));
          runStart = i + n;
        }
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#scanningEncodings = false;
        continue;
      }
      const headerStart = i;
      const heldBefore = this.#have;
      let size = this.#measure();
      while (size <= 0 && i < chunk.length) {
        const take = Math.min(-size - this.#have, chunk.length - i);
        chunk.copy(this.#hdr, this.#have, i, i + take);
        this.#have += take;
        i += take;
        size = this.#measure();
      }
      if (Number.isNaN(size)) {
        this.#unframeable(this.#reason); // throws when view-only
        const held = this.#hdr.subarray(0, heldBefore);
        return this.#finish(chunk, out, runStart, headerStart, held, true);
      }
      if (size <= 0) {
        // The header goes on in the next chunk; its bytes wait in #hdr.
        if (headerStart > runStart) out.push(chunk.subarray(runStart, headerStart));
        runStart = chunk.length;
        break;
      }
      const isInput = this.#complete(size);
      input ||= isInput;
      const drop = isInput && this.#viewOnly;
      if (drop) {
        if (headerStart > runStart) out.push(chunk.subarray(runStart, headerStart));
        runStart = i;
      } else if (heldBefore > 0) {
        out.push(Buffer.from(this.#hdr.subarray(0, heldBefore))); // #hdr is reused; a header started in an earlier chunk, so runStart is 0 here
      }
      this.#left = size - this.#have;
      this.#dropping = drop;
      this.#have = 0;
      if (this.#raw) return this.#finish(chunk, out, runStart, i, Buffer.alloc(0), input);
    }
    if (input) this.#onInput();
    if (runStart === 0 && out.length === 0) return chunk; // all of it kept: the same buffer
    if (chunk.length > runStart) out.push(chunk.subarray(runStart));
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** The rest of `chunk` from `from` (after `held`, header bytes of earlier chunks) passes unfollowed. */
  #finish(chunk: Buffer, out: Buffer[], runStart: number, from: number, held: Buffer, input: boolean): Buffer {
    if (from > runStart) out.push(chunk.subarray(runStart, from));
    if (held.length > 0) out.push(Buffer.from(held));
    if (chunk.length > from) out.push(chunk.subarray(from));
    this.#have = 0;
    if (input || chunk.length > from || held.length > 0) this.#onInput();
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** The current message's size from its header so far (see MessageKind.size). */
  #measure(): number {
    if (this.#have === 0) return -1;
    switch (this.#phase) {
      case 'version':
        return this.#have < 12 ? -12 : 12;
      case 'auth':
        return 16; // the response to VNC Authentication's challenge
      case 'choice':
      case 'init':
        return 1;
      case 'await-type':
        this.#reason = 'the client sent bytes before the server chose a security type';
        return UNFRAMEABLE;
      case 'stuck':
        return UNFRAMEABLE;
      case 'messages': {
        const size = clientMessageSize(this.#hdr, this.#have, this.#extendedPointer);
        if (Number.isNaN(size)) this.#reason = `unknown RFB client message (type ${this.#hdr[0]}${this.#hdr[0] === 255 ? `, subtype ${this.#hdr[1]}` : ''})`;
        return size;
      }
    }
  }

  /** A message's header is complete: moves the handshake on; answers whether the message is input. */
  #complete(size: number): boolean {
    const h = this.#hdr;
    switch (this.#phase) {
      case 'version':
        this.#version(h.toString('latin1', 0, 12));
        return false;
      case 'choice':
        this.#security(h[0]!);
        return false;
      case 'auth':
        this.#phase = 'init';
        return false;
      case 'init':
        this.#phase = 'messages';
        return false;
      default: {
        if (h[0] === 2) this.#scanningEncodings = size > 4;
        return MESSAGES.get(h[0]!)!.input(h);
      }
    }
  }

  #version(text: string): void {
    const match = /^RFB (\d{3})\.(\d{3})\n$/.exec(text);
    if (!match || Number(match[1]) < 3) return this.#unframeable(`not an RFB client ProtocolVersion: ${JSON.stringify(text)}`);
    // The server follows the client's version; UltraVNC's 3.6 is 3.3, later versions behave like 3.8.
    this.#v33 = Number(match[1]) === 3 && Number(match[2]) < 7;
    if (!this.#v33) this.#phase = 'choice';
    else if (this.#serverHave === 16) this.#serverChose();
    else this.#phase = 'await-type';
  }

  /** RFB 3.3: the server's security type arrived. A refusal (0) or another type makes the rest unreadable. */
  #serverChose(): void {
    const type = this.#server.readUInt32BE(12);
    if (type === SECURITY_NONE || type === SECURITY_VNC_AUTH) return this.#security(type);
    this.#phase = 'stuck';
    this.#reason = type === 0 ? 'the VNC server refused the connection' : securityReason(type);
  }

  #security(type: number): void {
    if (type === SECURITY_NONE) this.#phase = 'init';
    else if (type === SECURITY_VNC_AUTH) this.#phase = 'auth';
    else this.#unframeable(securityReason(type));
  }

  /** Throws when view-only; otherwise everything from here on passes unfollowed. */
  #unframeable(reason: string): void {
    if (this.#viewOnly) throw new Error(reason);
    this.#raw = true;
  }

  /** SetEncodings' body, 4 bytes per encoding (which may be split across chunks). */
  #scanEncodings(chunk: Buffer, from: number, to: number): void {
    for (let i = from; i < to; i++) {
      this.#encoding[this.#encodingHave++] = chunk[i]!;
      if (this.#encodingHave < 4) continue;
      this.#encodingHave = 0;
      if (this.#encoding.readInt32BE(0) === EXTENDED_MOUSE_BUTTONS) this.#extendedPointer = true;
    }
  }
}

function securityReason(type: number): string {
  return `view-only needs VNC authentication or none; this server chose type ${type}`;
}
