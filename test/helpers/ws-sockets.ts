// WebSockets a test file opens, tracked so that each test's leftovers are closed after it: a failed test
// must not hold sessions (and their per-user limits) into the next one.
import WebSocket from 'ws';

export interface TrackedSockets {
  add(ws: WebSocket): void;
  /** Closes every socket still open and waits for each close. */
  closeAll(): Promise<void>;
}

export function trackedSockets(): TrackedSockets {
  const sockets = new Set<WebSocket>();
  return {
    add: (ws) => sockets.add(ws),
    closeAll: async () => {
      await Promise.all(
        [...sockets].map((ws) => {
          sockets.delete(ws);
          if (ws.readyState === WebSocket.CLOSED) return undefined;
          return new Promise((resolve) => {
            ws.once('close', resolve);
            ws.close();
          });
        }),
      );
    },
  };
}
