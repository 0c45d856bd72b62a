// The command history's ids are reserved ahead (src/modules/history/history-writer.ts): a quiet server
// takes one id per command, so entries are numbered without gaps; commands at once each get their own
// id, in the order they asked; ids reserved more than a second ago are not handed out (so entries of
// several instances keep their time order).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { HistoryWriter } from '../src/modules/history/history-writer.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { createTestDb } from './helpers/db.js';

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
});
afterAll(() => handle.close());

const writer = (clock: FakeClock) => new HistoryWriter(handle.db, clock, createLogger({ level: 'silent' }));

it('numbers the commands of a quiet server one after another', async () => {
  const clock = new FakeClock();
  const history = writer(clock);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(await history.reserveId());
    await clock.advance(5_000);
  }
  expect(ids).toEqual([ids[0]!, ids[0]! + 1, ids[0]! + 2, ids[0]! + 3, ids[0]! + 4]);
});

it('gives commands at once their own ids in the order they asked, and hands out no id reserved over a second ago', async () => {
  const clock = new FakeClock();
  const history = writer(clock);
  const burst = await Promise.all(Array.from({ length: 300 }, () => history.reserveId()));
  expect(new Set(burst).size).toBe(300);
  expect(burst).toEqual([...burst].sort((a, b) => a - b));

  // The burst's last block had ids left over (blocks double up to 64 while used up within a second);
  // more than a second later they are not handed out: the next id comes after them.
  await clock.advance(1_500);
  const later = await history.reserveId();
  expect(later - Math.max(...burst)).toBeGreaterThan(1);
});
