// The simulated devices' screen (issue 60): a small RFB 3.8 server (RFC 6143) written here in about 200
// lines, no library, so the demo's "Remote desktop" shows something live. It draws an 800×600 test screen:
// eight colour bars and, below them, a block that moves one place a second. Security type None: it is for
// the demo only and listens on loopback only (the fleet maps the VNC default 127.0.0.1:5900 of its agents'
// tunnels to it). Updates are Raw only; SetPixelFormat is honoured for 32-bit true colour (any shifts and
// byte order) and any other format closes the connection; input is read and ignored.
import net, { type AddressInfo } from 'node:net';
import { setInterval as every } from 'node:timers/promises';
import { clientMessageSize } from '../modules/remote-access/rfb-client-stream.js';

export const SCREEN = { width: 800, height: 600 } as const;
/** The bars' colours, left to right, each 100 pixels wide and 500 high. */
export const BARS: readonly (readonly [number, number, number])[] = [
  [255, 255, 255], [255, 255, 0], [0, 255, 255], [0, 255, 0], [255, 0, 255], [255, 0, 0], [0, 0, 255], [0, 0, 0],
];
/** The strip under the bars where the block moves: the only part that changes. */
const STRIP = { x: 0, y: 500, width: SCREEN.width, height: 100 };
const STRIP_COLOUR = [32, 32, 32] as const;
export const BLOCK_COLOUR = [255, 128, 0] as const;
/** A clipboard larger than this closes the connection (nothing in a demo sends one). */
const MAX_MESSAGE = 1024 * 1024;

interface PixelFormat {
  bigEndian: boolean;
  max: [number, number, number];
  shift: [number, number, number];
}

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

const DEFAULT_FORMAT: PixelFormat = { bigEndian: false, max: [255, 255, 255], shift: [16, 8, 0] };

/** The colour at (x, y) when the block is at place `tick` (of eight). */
function colourAt(x: number, y: number, tick: number): readonly [number, number, number] {
  if (y < STRIP.y) return BARS[Math.floor(x / 100)]!;
  return Math.floor(x / 100) === tick % 8 ? BLOCK_COLOUR : STRIP_COLOUR;
}

function encodeFormat(f: PixelFormat): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt8(32, 0);
  b.writeUInt8(24, 1);
  b.writeUInt8(f.bigEndian ? 1 : 0, 2);
  b.writeUInt8(1, 3); // true colour
  f.max.forEach((m, i) => b.writeUInt16BE(m, 4 + 2 * i));
  f.shift.forEach((s, i) => b.writeUInt8(s, 10 + i));
  return b;
}

function intersect(a: Rect, b: Rect): Rect | null {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const width = Math.min(a.x + a.width, b.x + b.width) - x;
  const height = Math.min(a.y + a.height, b.y + b.height) - y;
  return width > 0 && height > 0 ? { x, y, width, height } : null;
}

/** One viewer's connection: handshake, then client messages; updates in the viewer's pixel format. */
class Viewer {
  #stage: 'version' | 'security' | 'init' | 'messages' = 'version';
  #pending: Buffer = Buffer.alloc(0);
  /** RFB 3.8 sends a SecurityResult after None; 3.7 does not. */
  #v38 = true;
  #format = DEFAULT_FORMAT;
  /** The screen's tick last sent, and an incremental request waiting for the next change. */
  #sentTick = -1;
  #waiting: Rect | null = null;

  constructor(
    private readonly socket: net.Socket,
    private readonly screen: SimulatedVncServer,
  ) {
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => this.#read(chunk));
    socket.write('RFB 003.008\n');
  }

  /** The screen changed: answers a waiting incremental request. */
  changed(): void {
    const rect = this.#waiting;
    this.#waiting = null;
    if (rect) this.#update(rect, true);
  }

  #read(chunk: Buffer): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    for (;;) {
      const size = this.#sizeOfNext();
      if (Number.isNaN(size) || size > MAX_MESSAGE) return void this.socket.destroy();
      if (size <= 0 || this.#pending.length < size) return;
      const message = this.#pending.subarray(0, size);
      this.#pending = this.#pending.subarray(size);
      this.#handle(message);
      if (this.socket.destroyed) return;
    }
  }

  #sizeOfNext(): number {
    if (this.#pending.length === 0) return 0;
    if (this.#stage === 'version') return 12;
    if (this.#stage !== 'messages') return 1;
    return clientMessageSize(this.#pending, Math.min(this.#pending.length, 12));
  }

  #handle(m: Buffer): void {
    switch (this.#stage) {
      case 'version': {
        this.#stage = m.toString('latin1') === 'RFB 003.003\n' ? 'init' : 'security';
        // RFB 3.3: the server names the type; 3.7 and 3.8: it offers a list of one.
        this.socket.write(this.#stage === 'init' ? Buffer.from([0, 0, 0, 1]) : Buffer.from([1, 1]));
        this.#v38 = m.toString('latin1') !== 'RFB 003.007\n';
        return;
      }
      case 'security':
        if (m[0] !== 1) return void this.socket.destroy();
        this.#stage = 'init';
        if (this.#v38) this.socket.write(Buffer.alloc(4)); // SecurityResult: OK
        return;
      case 'init': {
        this.#stage = 'messages';
        const name = Buffer.from('simulated device');
        const head = Buffer.alloc(4);
        head.writeUInt16BE(SCREEN.width, 0);
        head.writeUInt16BE(SCREEN.height, 2);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(name.length);
        this.socket.write(Buffer.concat([head, encodeFormat(this.#format), length, name]));
        return;
      }
      case 'messages':
        if (m[0] === 0) this.#setPixelFormat(m.subarray(4));
        else if (m[0] === 3) this.#update({ x: m.readUInt16BE(2), y: m.readUInt16BE(4), width: m.readUInt16BE(6), height: m.readUInt16BE(8) }, m[1] === 1);
    }
  }

  #setPixelFormat(f: Buffer): void {
    if (f[0] !== 32 || f[3] !== 1) return void this.socket.end(); // only 32-bit true colour is drawn
    this.#format = { bigEndian: f[2] !== 0, max: [f.readUInt16BE(4), f.readUInt16BE(6), f.readUInt16BE(8)], shift: [f[10]!, f[11]!, f[12]!] };
  }

  #update(requested: Rect, incremental: boolean): void {
    const tick = this.screen.tick;
    const rect = intersect(requested, incremental ? STRIP : { x: 0, y: 0, ...SCREEN });
    if (!rect || (incremental && this.#sentTick === tick)) {
      this.#waiting = requested; // nothing new there yet: answered at the next change
      return;
    }
    this.#sentTick = tick;
    this.socket.write(this.#raw(rect, tick));
  }

  /** A FramebufferUpdate of one Raw rectangle. */
  #raw(r: Rect, tick: number): Buffer {
    const out = Buffer.alloc(16 + r.width * r.height * 4);
    out.writeUInt16BE(1, 2);
    [r.x, r.y, r.width, r.height].forEach((v, i) => out.writeUInt16BE(v, 4 + 2 * i));
    const { max, shift, bigEndian } = this.#format;
    let at = 16;
    for (let y = r.y; y < r.y + r.height; y++) {
      for (let x = r.x; x < r.x + r.width; x++, at += 4) {
        const c = colourAt(x, y, tick);
        const pixel = (((c[0] * max[0]) / 255) << shift[0]) | (((c[1] * max[1]) / 255) << shift[1]) | (((c[2] * max[2]) / 255) << shift[2]);
        if (bigEndian) out.writeUInt32BE(pixel >>> 0, at);
        else out.writeUInt32LE(pixel >>> 0, at);
      }
    }
    return out;
  }
}

/** The test screen's server: start() listens on an ephemeral loopback port; stop() closes everything. */
export class SimulatedVncServer {
  #tick = 0;
  readonly #viewers = new Set<Viewer>();
  readonly #sockets = new Set<net.Socket>();
  readonly #abort = new AbortController();
  readonly #server = net.createServer((socket) => {
    const viewer = new Viewer(socket, this);
    this.#viewers.add(viewer);
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#viewers.delete(viewer);
      this.#sockets.delete(socket);
    });
  });

  /** Which of the block's places is drawn; moves once a second. */
  get tick(): number {
    return this.#tick;
  }

  async start(): Promise<{ host: string; port: number }> {
    await new Promise<void>((resolve, reject) => this.#server.once('error', reject).listen(0, '127.0.0.1', resolve));
    void this.#move();
    return { host: '127.0.0.1', port: (this.#server.address() as AddressInfo).port };
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #move(): Promise<void> {
    try {
      for await (const _ of every(1000, undefined, { signal: this.#abort.signal })) {
        this.#tick++;
        for (const viewer of this.#viewers) viewer.changed();
      }
    } catch {
      // aborted by stop()
    }
  }
}
