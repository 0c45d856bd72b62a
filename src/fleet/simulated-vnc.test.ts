// The simulated devices' screen, seen by an RFB viewer over real TCP: the handshake, a whole screen whose
// pixels are the test screen's colours, and an incremental update once the block moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RfbViewer, type Update } from '../../test/helpers/rfb-viewer.js';
import { BARS, BLOCK_COLOUR, SCREEN, SimulatedVncServer } from './simulated-vnc.js';

/** The colour at (x, y) of an update's first rectangle, read in the server's default format (BGRX). */
function pixel(update: Update, x: number, y: number): [number, number, number] {
  const r = update.rects[0]!;
  const at = ((y - r.y) * r.width + (x - r.x)) * 4;
  return [r.data[at + 2]!, r.data[at + 1]!, r.data[at]!];
}

/** Where in the strip under the bars (x of each 100-pixel place's middle) the block is drawn. */
function blockPlaces(update: Update): number[] {
  return [50, 150, 250, 350, 450, 550, 650, 750].filter((x) => pixel(update, x, 550).join() === BLOCK_COLOUR.join());
}

describe('the simulated VNC server', () => {
  const server = new SimulatedVncServer();
  let address: { host: string; port: number };
  beforeAll(async () => {
    address = await server.start();
  });
  afterAll(() => server.stop());

  it('shows the test screen and sends the moving block as it moves', async () => {
    const viewer = await RfbViewer.tcp(address.host, address.port);
    try {
      const init = await viewer.handshake();
      expect(init).toMatchObject({ width: SCREEN.width, height: SCREEN.height, bpp: 32 });
      viewer.request(false, init);
      const full = await viewer.nextUpdate();
      expect(full.rects[0]).toMatchObject({ x: 0, y: 0, width: 800, height: 600 });
      expect(pixel(full, 50, 50)).toEqual(BARS[0]);
      expect(pixel(full, 550, 300)).toEqual([255, 0, 0]);
      const before = blockPlaces(full);
      expect(before).toHaveLength(1);

      // Nothing changed since the whole screen: the answer waits for the block's next move (≤ 1 s).
      const started = Date.now();
      viewer.request(true, init);
      const next = await viewer.nextUpdate();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(next.rects[0]).toMatchObject({ x: 0, y: 500, width: 800, height: 100 });
      const after = blockPlaces(next);
      expect(after).toHaveLength(1);
      expect(after).not.toEqual(before);
    } finally {
      viewer.close();
    }
  });
});
