import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { StreamService } from '../../src/stream/service.js';
import type { Sink } from '../../src/stream/subscriber.js';
import { describeEachBackend, instrument, openTestDb, testSettings } from '../helper.js';

// A token can expire after the request was authenticated but before its stream began (while the
// snapshot is read). Nothing has been sent then, so the request is answered as an expired token
// is: 401, not the 503 of a stream that ended for another reason.

const quiet = { info() {}, warn() {}, error() {} };

function sink(): Sink & { ended: boolean } {
  let opened = false;
  const s = {
    ended: false,
    write: () => true,
    buffered: () => 0,
    onDrain() {},
    open: () => void (opened = true),
    opened: () => opened,
    onClose() {},
    end: () => void (s.ended = true),
  };
  return s;
}

describeEachBackend('a stream whose token expires while it is set up', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
  });
  afterAll(() => db.close());

  it('is answered 401, with nothing sent', async () => {
    // Each query of the set-up waits 50 ms first, so the token's 5 ms run out during the first.
    const slow = instrument(db, (view) => ({
      query: (async (...args: Parameters<Database['query']>) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return view.query(...args);
      }) as Database['query'],
    }));
    const service = new StreamService(slow, testSettings(), quiet);
    const out = sink();
    try {
      const scope = { clientId: 'client-1', named: [1], sites: [1], reach: null };
      const err = await service
        .subscribe(out, { ...scope, expiresAt: Date.now() + 5 }, undefined)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toMatchObject({ statusCode: 401 });
      expect(out.opened()).toBe(false);
      expect(out.ended).toBe(true);
      // A token that lasts through the set-up gets its stream.
      const lasting = sink();
      await service.subscribe(lasting, { ...scope, expiresAt: Date.now() + 60_000 }, undefined);
      expect(lasting.opened()).toBe(true);
    } finally {
      await service.close();
    }
  });
});
