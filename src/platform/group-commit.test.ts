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
