import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer } from '../../helpers/server.ts';

describe('closing the server', () => {
  // HTTP clients open spare connections they may never use; Node counts one that has sent nothing
  // neither idle nor expired, so close() (and a rolling restart's drain) would wait for its client.
  it('does not wait for a connection that has sent no byte', async () => {
    const s = await startServer(await writeSampleData());
    const spare = net.connect(Number(new URL(s.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => spare.once('connect', () => resolve()));
    const spareClosed = new Promise<void>((resolve) => spare.once('close', () => resolve()));
    const answer = s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv');
    const r = await answer;
    await s.close();
    // Had close() waited for the spare connection, the test would time out above.
    await spareClosed;
    expect(r.status).toBe(200);
    expect((await r.text()).split('\n').length).toBeGreaterThan(1);
  });
});
