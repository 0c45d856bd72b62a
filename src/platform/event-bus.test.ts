import { describe, expect, it } from 'vitest';
import { EventBus } from './event-bus.js';

interface Events {
  'agent.connected': { agentId: string };
  'status.checked': Record<string, never>;
}

function bus() {
  const errors: string[] = [];
  const events = new EventBus<Events>({ error: (obj: unknown, msg?: string) => errors.push(`${msg} ${String((obj as { event: string }).event)}`) });
  return { events, errors };
}

describe('EventBus', () => {
  it('hands each payload to every subscriber in order, until it unsubscribes', () => {
    const { events } = bus();
    const seen: string[] = [];
    const off = events.on('agent.connected', ({ agentId }) => void seen.push(`a:${agentId}`));
    events.on('agent.connected', ({ agentId }) => void seen.push(`b:${agentId}`));
    events.emit('agent.connected', { agentId: '1' });
    off();
    events.emit('agent.connected', { agentId: '2' });
    expect(seen).toEqual(['a:1', 'b:1', 'b:2']);
  });

  it('a subscriber that throws or rejects is logged and neither stops the others nor reaches the emitter', async () => {
    const { events, errors } = bus();
    const seen: string[] = [];
    events.on('agent.connected', () => {
      throw new Error('boom');
    });
    events.on('agent.connected', async () => {
      throw new Error('later');
    });
    events.on('agent.connected', ({ agentId }) => void seen.push(agentId));
    expect(() => events.emit('agent.connected', { agentId: 'x' })).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['x']);
    expect(errors).toEqual(['a reaction to an event failed agent.connected', 'a reaction to an event failed agent.connected']);
  });

  it('emitAndWait waits for every reaction and rejects with a failure, for the emitter to report', async () => {
    const { events } = bus();
    let done = false;
    events.on('status.checked', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      done = true;
    });
    await events.emitAndWait('status.checked', {});
    expect(done).toBe(true);
    events.on('status.checked', async () => {
      throw new Error('evaluation failed');
    });
    await expect(events.emitAndWait('status.checked', {})).rejects.toThrow('evaluation failed');
  });
});
