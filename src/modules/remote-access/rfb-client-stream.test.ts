// The client's half of RFB sessions, built byte by byte as RFC 6143 and noVNC 1.7 write them, fed through
// RfbClientStream in every chunking: what a view-only desktop passes on must be exactly the requests.
import { describe, expect, it } from 'vitest';
import { RfbClientStream } from './rfb-client-stream.js';

/** One step of a session: bytes from one side; a client message marked input is what view-only drops. */
interface Step {
  from: 'server' | 'client';
  bytes: Buffer;
  input?: boolean;
}

const bytes = (...parts: number[]) => Buffer.from(parts);
const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff];
const u32 = (n: number) => [...u16((n >>> 16) & 0xffff), ...u16(n & 0xffff)];
const server = (b: Buffer): Step => ({ from: 'server', bytes: b });
const client = (b: Buffer, input = false): Step => ({ from: 'client', bytes: b, input });
const version = (v: string) => Buffer.from(`RFB ${v}\n`, 'latin1');
const serverInit = bytes(...u16(800), ...u16(600), 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0, ...u32(4), ...Buffer.from('demo'));
const challenge = Buffer.alloc(16, 7);
const response = Buffer.alloc(16, 9);

function handshake(kind: '3.8-none' | '3.8-vnc' | '3.3-vnc' | '3.7-none'): Step[] {
  const v = kind.slice(0, 3) === '3.3' ? '003.003' : kind.startsWith('3.7') ? '003.007' : '003.008';
  const type = kind.endsWith('vnc') ? 2 : 1;
  const steps = [server(version(v)), client(version(v))];
  if (v === '003.003') steps.push(server(bytes(...u32(type))));
  else steps.push(server(bytes(2, 1, 2)), client(bytes(type)));
  if (type === 2) steps.push(server(challenge), client(response));
  if (type === 2 || v === '003.008') steps.push(server(bytes(...u32(0))));
  steps.push(client(bytes(1)), server(serverInit));
  return steps;
}

/** What noVNC sends in a session, with one of every other client message RFC 6143 and its registry list. */
const messages: Step[] = [
  client(bytes(0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0)), // SetPixelFormat
  client(bytes(2, 0, ...u16(3), ...u32(0), ...u32(-258 >>> 0), ...u32(-316 >>> 0))), // SetEncodings with ExtendedMouseButtons
  client(bytes(3, 0, ...u16(0), ...u16(0), ...u16(800), ...u16(600))),
  client(bytes(4, 1, 0, 0, ...u32(0x61)), true),
  client(bytes(5, 1, ...u16(10), ...u16(20)), true),
  client(bytes(5, 0x81, ...u16(10), ...u16(20), 1), true), // extended pointer event: the marker bit, one more byte
  client(bytes(6, 0, 0, 0, ...u32(5), ...Buffer.from('hello')), true),
  client(bytes(6, 0, 0, 0, ...u32(-4 >>> 0), 0, 0, 0, 1), true), // Extended Clipboard caps: negative length
  client(bytes(150, 1, ...u16(0), ...u16(0), ...u16(800), ...u16(600))),
  client(bytes(248, 0, 0, 0, ...u32(0x80000000), 3, 1, 2, 3)),
  client(bytes(250, 0, 1, 2), true),
  client(bytes(251, 0, ...u16(1024), ...u16(768), 1, 0, ...u32(0), ...u16(0), ...u16(0), ...u16(1024), ...u16(768), ...u32(0)), true),
  client(bytes(255, 0, ...u16(1), ...u32(0xff0d), ...u32(0x1c)), true), // QEMU extended key event
  client(bytes(255, 1, ...u16(2), 3, 2, ...u32(44100))), // QEMU audio: set format
  client(bytes(255, 1, ...u16(0))), // QEMU audio: enable
  client(bytes(3, 1, ...u16(0), ...u16(0), ...u16(800), ...u16(600))),
];

const clientBytes = (steps: Step[]) => Buffer.concat(steps.filter((s) => s.from === 'client').map((s) => s.bytes));
const expected = (steps: Step[], viewOnly: boolean) => clientBytes(steps.filter((s) => !(viewOnly && s.input)));

/**
 * Feeds the session with the client's bytes in pieces cut at `cuts` (offsets into the client's stream),
 * each server step before the client bytes that follow it; answers what was passed on and the number of
 * onInput calls.
 */
function run(steps: Step[], viewOnly: boolean, cuts: (length: number) => number[]): { out: Buffer; inputs: number } {
  let inputs = 0;
  const stream = new RfbClientStream({ viewOnly, onInput: () => inputs++ });
  const out: Buffer[] = [];
  const all = clientBytes(steps);
  // The server's bytes go in once the client has sent everything before them.
  const serverAt: { at: number; bytes: Buffer }[] = [];
  let sent = 0;
  for (const step of steps) {
    if (step.from === 'server') serverAt.push({ at: sent, bytes: step.bytes });
    else sent += step.bytes.length;
  }
  const points = [...new Set([0, ...cuts(all.length), ...serverAt.map((s) => s.at), all.length])].sort((a, b) => a - b);
  for (let k = 0; k < points.length; k++) {
    for (const s of serverAt) if (s.at === points[k]) stream.fromTarget(s.bytes);
    if (k + 1 < points.length) out.push(stream.fromClient(all.subarray(points[k], points[k + 1])));
  }
  return { out: Buffer.concat(out), inputs };
}

const whole = () => [];
const everyByte = (length: number) => Array.from({ length }, (_, i) => i);

describe('RfbClientStream', () => {
  for (const kind of ['3.8-none', '3.8-vnc', '3.3-vnc', '3.7-none'] as const) {
    it(`frames a ${kind} session: view-only passes exactly the requests, otherwise everything`, () => {
      const steps = [...handshake(kind), ...messages];
      for (const cuts of [whole, everyByte]) {
        expect(run(steps, true, cuts).out).toEqual(expected(steps, true));
        expect(run(steps, false, cuts).out).toEqual(expected(steps, false));
      }
    });
  }

  it('frames the messages however one cut splits them', () => {
    const steps = [...handshake('3.8-vnc'), ...messages];
    const length = clientBytes(steps).length;
    for (let cut = 1; cut < length; cut++) {
      expect(run(steps, true, () => [cut]).out).toEqual(expected(steps, true));
    }
  });

  it('reports input once per chunk that carried some, and never for requests alone', () => {
    const requests = messages.filter((m) => !m.input);
    expect(run([...handshake('3.8-none'), ...requests], true, whole).inputs).toBe(0);
    expect(run([...handshake('3.8-none'), ...messages], true, whole).inputs).toBe(1);
    const key = client(bytes(4, 1, 0, 0, ...u32(0x61)), true);
    // Cut into single bytes, the key's 8 bytes call onInput once: when its type byte arrives.
    expect(run([...handshake('3.8-none'), key], false, everyByte).inputs).toBe(1);
  });

  it('drops a 1 MiB clipboard in view-only as it streams, holding nothing of it', () => {
    let inputs = 0;
    const stream = new RfbClientStream({ viewOnly: true, onInput: () => inputs++ });
    for (const step of handshake('3.8-none')) {
      if (step.from === 'server') stream.fromTarget(step.bytes);
      else expect(stream.fromClient(step.bytes)).toEqual(step.bytes);
    }
    const size = 1024 * 1024;
    expect(stream.fromClient(bytes(6, 0, 0, 0, ...u32(size)))).toHaveLength(0);
    const piece = Buffer.alloc(64 * 1024, 0x41);
    for (let sent = 0; sent < size; sent += piece.length) {
      expect(stream.fromClient(piece)).toHaveLength(0);
      expect(stream.heldBytes).toBe(0);
    }
    const request = bytes(3, 1, ...u16(0), ...u16(0), ...u16(800), ...u16(600));
    expect(stream.fromClient(request)).toEqual(request);
    expect(inputs).toBe(1);
  });

  it('passes a chunk of requests on as the same buffer, without copying it', () => {
    const stream = new RfbClientStream({ viewOnly: true });
    for (const step of handshake('3.8-none')) if (step.from === 'server') stream.fromTarget(step.bytes);
    else stream.fromClient(step.bytes);
    const requests = clientBytes(messages.filter((m) => !m.input));
    expect(stream.fromClient(requests)).toBe(requests);
  });

  describe('a security type it cannot follow (VeNCrypt)', () => {
    const start = [server(version('003.008')), client(version('003.008')), server(bytes(1, 19))];
    const rest = bytes(0, 2, 0, 0, 0, 1, 1, 2, 3, 4, 5); // VeNCrypt's version and whatever follows

    it('ends a view-only session', () => {
      const stream = new RfbClientStream({ viewOnly: true });
      stream.fromTarget(start[0]!.bytes);
      stream.fromClient(start[1]!.bytes);
      stream.fromTarget(start[2]!.bytes);
      expect(() => stream.fromClient(bytes(19))).toThrow('view-only needs VNC authentication or none; this server chose type 19');
    });

    it('passes everything of another session on, each chunk counted as input', () => {
      let inputs = 0;
      const stream = new RfbClientStream({ viewOnly: false, onInput: () => inputs++ });
      stream.fromTarget(start[0]!.bytes);
      stream.fromClient(start[1]!.bytes);
      stream.fromTarget(start[2]!.bytes);
      expect(stream.fromClient(bytes(19))).toEqual(bytes(19));
      expect(inputs).toBe(0);
      expect(stream.fromClient(rest)).toBe(rest);
      expect(stream.fromClient(bytes(4, 1))).toEqual(bytes(4, 1));
      expect(inputs).toBe(2);
    });

    it('ends a view-only RFB 3.3 session whose server chose it', () => {
      const stream = new RfbClientStream({ viewOnly: true });
      stream.fromTarget(version('003.003'));
      stream.fromClient(version('003.003'));
      stream.fromTarget(bytes(...u32(16)));
      expect(() => stream.fromClient(bytes(1))).toThrow('this server chose type 16');
    });
  });

  it('ends a view-only session at an unknown message type or QEMU subtype; passes it on otherwise', () => {
    for (const unknown of [bytes(77, 1, 2, 3), bytes(255, 9, 0, 0)]) {
      const steps = [...handshake('3.8-none'), client(unknown)];
      expect(() => run(steps, true, whole)).toThrow('unknown RFB client message');
      const passed = run([...steps, client(bytes(4, 1, 0, 0, 0, 0, 0, 0x61))], false, everyByte);
      expect(passed.out).toEqual(expected([...steps, client(bytes(4, 1, 0, 0, 0, 0, 0, 0x61))], false));
    }
  });

  it('reads a pointer event with the marker bit as 6 bytes unless the client announced ExtendedMouseButtons', () => {
    const plain = client(bytes(2, 0, ...u16(1), ...u32(0)));
    const pointer = client(bytes(5, 0x81, ...u16(1), ...u16(2)), true);
    const request = client(bytes(3, 1, ...u16(0), ...u16(0), ...u16(8), ...u16(6)));
    const steps = [...handshake('3.8-none'), plain, pointer, request];
    expect(run(steps, true, everyByte).out).toEqual(expected(steps, true));
  });
});
