// The socket the agent hub talks to: the part of a `ws` WebSocket it uses. Its own file because both the
// hub (agent-hub.ts) and the frame writer it calls (two-part-send.ts) name it.

/** The part of a `ws` WebSocket the hub uses (tests and the fleet simulator can pass their own). */
export interface HubSocket {
  readonly readyState: number;
  /** Bytes queued for sending and not yet handed to the network. */
  readonly bufferedAmount: number;
  pause(): void;
  resume(): void;
  send(data: string | Buffer, cb?: (err?: Error) => void): void;
  ping(): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): unknown;
  on(event: 'pong' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}
