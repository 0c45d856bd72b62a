// With gatherMs, every batch waits for company, the first after an idle spell too: on the embedded
// database a lone statement costs more than the few milliseconds' wait (heartbeat-writer.ts).
import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A pipeline that gathers for 30 ms, recording every batch. */
function gatheringPipeline() {
  const batches: string[][] = [];
  const pipeline = new GroupCommit<string, string>(
    async (items) => {
      batches.push([...items]);
      return items.map((item) => `${item}!`);
    },
    { gatherMs: 30 },
  );
  return { pipeline, batches };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit gathering', () => {
  it('makes a lone item wait for company too', async () => {
    const { pipeline, batches } = gatheringPipeline();
    const a = pipeline.submit('a');
    await turn();
    expect(batches).toEqual([]);
    const b = pipeline.submit('b');
    expect(await Promise.all([a, b])).toEqual(['a!', 'b!']);
    expect(batches[0]).toEqual(['a', 'b']);
  });
});

describe('GroupCommit flush', () => {
  it('writes what is gathering at once and waits for it', async () => {
    const batches: string[][] = [];
    const pipeline = new GroupCommit<string, void>(
      async (items) => {
        batches.push([...items]);
        return [];
      },
      { gatherMs: 60_000 },
    );
    void pipeline.submit('a');
    void pipeline.submit('b');
    await pipeline.flush();
    expect(batches).toEqual([['a', 'b']]);
  });

  it('also waits for the items submitted while a batch was written, without gathering for them', async () => {
    const batches: string[][] = [];
    let release: () => void = () => undefined;
    const pipeline = new GroupCommit<string, void>(
      async (items) => {
        batches.push([...items]);
        if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return [];
      },
      { gatherMs: 60_000 },
    );
    void pipeline.submit('a');
    const flushed = pipeline.flush();
    await turn();
    void pipeline.submit('b'); // during the first write
    release();
    await flushed;
    expect(batches).toEqual([['a'], ['b']]);
  });
});
