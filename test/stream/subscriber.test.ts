import { describe, expect, it } from 'vitest';
import { encode, type Cursor } from '../../src/stream/cursor.js';
import type { StreamEvent } from '../../src/stream/events.js';
import { frame, tail } from '../../src/stream/frames.js';
import { Subscriber, type Sink } from '../../src/stream/subscriber.js';

// One client's queue, on a connection whose buffer fills when told to: writes at once while the
// client keeps up; coalesces readings per equipment while it lags (more than 64 KiB unsent; latest
// wins, never an older after a newer); ends the stream past the bound.

function fakeSink() {
  const state = {
    full: false,
    text: '',
    buffered: 0,
    ended: false,
    drain: [] as (() => void)[],
    closeFns: [] as (() => void)[],
  };
  const sink: Sink = {
    write(text) {
      state.text += text;
      if (state.full) state.buffered += text.length;
      return !state.full;
    },
    buffered: () => state.buffered,
    onDrain: (fn) => state.drain.push(fn),
    open: () => {},
    opened: () => true,
    onClose: (fn) => state.closeFns.push(fn),
    end: () => (state.ended = true),
  };
  const drain = () => {
    state.full = false;
    state.buffered = 0;
    state.drain.splice(0).forEach((fn) => fn());
  };
  /** The events written so far, as a client reads them. */
  const written = () =>
    state.text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => ({
        id: /^id: (.*)$/m.exec(block)![1],
        event: /^event: (.*)$/m.exec(block)![1],
        data: /^data: (.*)$/m.exec(block)![1],
      }));
  return { sink, state, drain, written };
}

const tick = () => new Promise((r) => setImmediate(r));
let xid = 1000;
function reading(equipment: string, ts: number, value: number): StreamEvent {
  const after: Cursor = { xmax: ++xid + 1, xip: [], partials: [] };
  const data = JSON.stringify({ equipment, ts, value });
  return {
    xid,
    eid: xid,
    siteId: 1,
    type: 'reading',
    data,
    key: equipment,
    ts,
    after,
    id: encode(after),
    tail: tail('reading', data),
  };
}
function other(type: 'logs' | 'alarm', value: number): StreamEvent {
  const after: Cursor = { xmax: ++xid + 1, xip: [], partials: [] };
  const data = JSON.stringify({ value });
  return { xid, eid: xid, siteId: 1, type, data, after, id: encode(after), tail: tail(type, data) };
}
const live = (sub: Subscriber) => sub.goLive();
const values = (frames: { data: string }[]) => frames.map((f) => JSON.parse(f.data).value);

describe('a subscriber queue', () => {
  it('does not coalesce a burst: a client with little unsent still gets every reading', async () => {
    const { sink, state, drain, written } = fakeSink();
    const sub = new Subscriber([1], sink, 1 << 20, () => {});
    live(sub);
    state.full = true;
    sub.push(reading('pump:1', 1, 1));
    await tick();
    for (let i = 2; i <= 5; i++) sub.push(reading('pump:1', i, i));
    drain();
    expect(values(written())).toEqual([1, 2, 3, 4, 5]);
    expect(sub.coalesced).toBe(0);
  });

  it('writes every event while the client keeps up, readings of one equipment included', async () => {
    const { sink, written } = fakeSink();
    const sub = new Subscriber([1], sink, 1 << 20, () => {});
    live(sub);
    for (let i = 1; i <= 5; i++) sub.push(reading('pump:1', i, i));
    await tick();
    expect(values(written())).toEqual([1, 2, 3, 4, 5]);
    expect(sub.coalesced).toBe(0);
    expect(written()[4].id).toMatch(/-[0-9a-z]+$/); // cursor, then the tag of the streamed sites
  });

  it('while the client lags, a queued reading gives way to a newer one of its equipment; other events all stay, in order', async () => {
    const { sink, state, drain, written } = fakeSink();
    const sub = new Subscriber([1], sink, 1 << 20, () => {});
    live(sub);
    state.full = true;
    state.buffered = 100_000; // a client that has not read the last 100 kB
    sub.push(reading('pump:1', 1, 1)); // written, and now the buffer is full
    await tick();
    sub.push(reading('pump:1', 2, 2));
    sub.push(other('logs', 3));
    sub.push(reading('pump:2', 2, 4));
    sub.push(reading('pump:1', 3, 5));
    sub.push(reading('pump:1', 2, 6)); // older than the queued one: never sent after it
    sub.push(other('alarm', 7));
    sub.push(reading('pump:2', 5, 8));
    await tick();
    expect(values(written())).toEqual([1]);
    drain();
    expect(values(written())).toEqual([1, 3, 5, 7, 8]);
    expect(sub.coalesced).toBe(3);
    // Ids only grow: the client resumes after the last one it got.
    const ids = written().map((f) => f.id);
    expect(ids).toEqual([...ids].sort((a, b) => parseInt(a, 36) - parseInt(b, 36)));
  });

  it('ends the stream when unsent bytes pass the bound, and holds nothing after', async () => {
    const { sink, state, written } = fakeSink();
    let reason = '';
    const sub = new Subscriber([1], sink, 4096, (r) => (reason = r));
    live(sub);
    state.full = true;
    sub.push(reading('pump:0', 1, 0));
    await tick();
    for (let i = 1; i <= 100 && !sub.closed; i++) sub.push(reading(`pump:${i}`, 1, i));
    expect(sub.closed).toBe(true);
    expect(state.ended).toBe(true);
    expect(reason).toBe('fell behind');
    sub.push(reading('pump:1', 9, 9));
    await tick();
    expect(values(written())).toEqual([0]);
  });

  it('holds live events while the snapshot or replay is sent, then sends those its position has not seen', async () => {
    const { sink, written } = fakeSink();
    const sub = new Subscriber([1], sink, 1 << 20, () => {});
    const seen = reading('pump:1', 1, 1);
    const unseen = other('logs', 2);
    sub.push(seen);
    sub.push(unseen);
    sub.send('snap', 'snapshot', '{"value":0}');
    sub.goLive(seen.after);
    await tick();
    expect(values(written())).toEqual([0, 2]);
    expect(written()[0].event).toBe('snapshot');
  });

  it('frames an event as SSE, a line break in data as several data lines', () => {
    expect(frame('3uw-1x', 'reading', '{"a":1}')).toBe(
      'id: 3uw-1x\nevent: reading\ndata: {"a":1}\n\n',
    );
    expect(frame('1', 'snapshot', 'a\nb\r\nc', 1000)).toBe(
      'id: 1\nevent: snapshot\nretry: 1000\ndata: a\ndata: b\ndata: c\n\n',
    );
  });

  it('ends when the connection closes', () => {
    const { sink, state } = fakeSink();
    let reason = '';
    const sub = new Subscriber(null, sink, 1 << 20, (r) => (reason = r));
    state.closeFns.forEach((fn) => fn());
    expect(sub.closed).toBe(true);
    expect(reason).toBe('disconnected');
  });
});
