// When a group commit waits for company: always (the default, socket events), or only behind another
// batch (heartbeats: a quiet server must not make a lone heartbeat wait for nobody).
import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A pipeline whose first batch is held until released, recording every batch. */
function heldPipeline(gatherFromIdle: boolean) {
  const batches: string[][] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const pipeline = new GroupCommit<string, string>(
    async (items) => {
      batches.push([...items]);
      if (batches.length === 1) await held;
      return items.map((item) => `${item}!`);
    },
    { gatherMs: 30, gatherFromIdle },
  );
  return { pipeline, batches, release };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit gathering', () => {
  it('without gatherFromIdle writes a lone item at once, and gathers only behind a batch', async () => {
    const { pipeline, batches, release } = heldPipeline(false);
    const a = pipeline.submit('a');
    await turn();
    expect(batches).toEqual([['a']]);
    const b = pipeline.submit('b');
    release();
    expect(await a).toBe('a!');
    // b's batch follows a's, so it waits for company: c, submitted now, joins it.
    const c = pipeline.submit('c');
    expect(await Promise.all([b, c])).toEqual(['b!', 'c!']);
    expect(batches).toEqual([['a'], ['b', 'c']]);
  });

  it('by default a lone item waits for company too', async () => {
    const { pipeline, batches, release } = heldPipeline(true);
    const a = pipeline.submit('a');
    await turn();
    expect(batches).toEqual([]);
    const b = pipeline.submit('b');
    release();
    expect(await Promise.all([a, b])).toEqual(['a!', 'b!']);
    expect(batches[0]).toEqual(['a', 'b']);
  });
});
