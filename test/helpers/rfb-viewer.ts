// A minimal RFB viewer (RFC 6143) for tests and benchmarks: RFB 3.8 with security None, Raw updates only,
// over a TCP socket or a WebSocket (noVNC's transport: binary frames carrying the byte stream). It reads
// what the server sends strictly in order, so a wrong length anywhere shows up as a failed read.
import net from 'node:net';
import WebSocket from 'ws';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ServerInit extends Rect {
  /** Bits per pixel of the server's pixel format. */
  bpp: number;
  name: string;
}

export interface Update {
  rects: (Rect & { encoding: number; data: Buffer })[];
  /** The update's size on the wire. */
  bytes: number;
}

/** A byte stream both ways. */
interface Link {
  write(bytes: Buffer): void;
  close(): void;
}

export class RfbViewer {
  #chunks: Buffer[] = [];
  #buffered = 0;
  #wake: (() => void) | null = null;
  #ended: Error | null = null;
  #bpp = 32;

  private constructor(private link: Link) {}

  /** Connects over TCP. */
  static tcp(host: string, port: number): Promise<RfbViewer> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port, noDelay: true });
      const viewer = new RfbViewer({ write: (b) => socket.write(b), close: () => socket.destroy() });
      socket.on('data', (b) => viewer.#push(b));
      socket.on('close', () => viewer.#end(new Error('the connection closed')));
      socket.once('error', reject);
      socket.once('connect', () => resolve(viewer));
    });
  }

  /** Connects over a WebSocket (as noVNC does, subprotocol `binary`). */
  static websocket(url: string): Promise<RfbViewer> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, ['binary']);
      const viewer = new RfbViewer({ write: (b) => ws.send(b), close: () => ws.terminate() });
      ws.on('message', (data: Buffer) => viewer.#push(data));
      ws.on('close', (code) => viewer.#end(new Error(`the WebSocket closed (${code})`)));
      ws.once('error', reject);
      ws.once('open', () => resolve(viewer));
    });
  }

  /** Version 3.8, security None, a shared ClientInit, and Raw as the only encoding. */
  async handshake(): Promise<ServerInit> {
    const version = (await this.#read(12)).toString('latin1');
    if (!version.startsWith('RFB 003.')) throw new Error(`not an RFB server: ${JSON.stringify(version)}`);
    this.link.write(Buffer.from('RFB 003.008\n'));
    const types = await this.#read((await this.#read(1))[0]!);
    if (!types.includes(1)) throw new Error(`the server does not offer security None (offers ${[...types].join(', ')})`);
    this.link.write(Buffer.from([1]));
    const result = (await this.#read(4)).readUInt32BE(0);
    if (result !== 0) throw new Error(`security result ${result}`);
    this.link.write(Buffer.from([1]));
    const init = await this.#read(24);
    const name = (await this.#read(init.readUInt32BE(20))).toString('utf8');
    this.#bpp = init[4]!;
    this.link.write(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0])); // SetEncodings: Raw only
    return { x: 0, y: 0, width: init.readUInt16BE(0), height: init.readUInt16BE(2), bpp: this.#bpp, name };
  }

  /** A FramebufferUpdateRequest. */
  request(incremental: boolean, r: Rect): void {
    const m = Buffer.alloc(10);
    m[0] = 3;
    m[1] = incremental ? 1 : 0;
    [r.x, r.y, r.width, r.height].forEach((v, i) => m.writeUInt16BE(v, 2 + 2 * i));
    this.link.write(m);
  }

  /** Reads up to the next FramebufferUpdate (skipping bells and clipboard text) and returns it. */
  async nextUpdate(): Promise<Update> {
    for (;;) {
      const type = (await this.#read(1))[0];
      if (type === 2) continue; // Bell
      if (type === 3) {
        await this.#read((await this.#read(7)).readUInt32BE(3)); // ServerCutText
        continue;
      }
      if (type !== 0) throw new Error(`unexpected server message ${type}`);
      const count = (await this.#read(3)).readUInt16BE(1);
      const update: Update = { rects: [], bytes: 4 };
      for (let n = 0; n < count; n++) {
        const h = await this.#read(12);
        const rect = { x: h.readUInt16BE(0), y: h.readUInt16BE(2), width: h.readUInt16BE(4), height: h.readUInt16BE(6), encoding: h.readInt32BE(8) };
        if (rect.encoding !== 0) throw new Error(`unexpected encoding ${rect.encoding}`);
        const data = await this.#read(rect.width * rect.height * (this.#bpp / 8));
        update.rects.push({ ...rect, data });
        update.bytes += 12 + data.length;
      }
      return update;
    }
  }

  close(): void {
    this.link.close();
  }

  #push(b: Buffer): void {
    this.#chunks.push(b);
    this.#buffered += b.length;
    this.#wake?.();
  }

  #end(err: Error): void {
    this.#ended ??= err;
    this.#wake?.();
  }

  async #read(n: number): Promise<Buffer> {
    while (this.#buffered < n) {
      if (this.#ended) throw this.#ended;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    const rest = all.subarray(n);
    this.#chunks = rest.length > 0 ? [rest] : [];
    this.#buffered = rest.length;
    return all.subarray(0, n);
  }
}
