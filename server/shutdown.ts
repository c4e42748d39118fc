import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Responses not yet finished, so a shutdown knows what it waits for and what it cuts. */
export function trackOpenResponses(app: FastifyInstance): Set<ServerResponse> {
  const open = new Set<ServerResponse>();
  app.addHook('onRequest', async (_request, reply) => {
    open.add(reply.raw);
    reply.raw.once('close', () => open.delete(reply.raw));
  });
  return open;
}

/**
 * Stops accepting, lets open responses finish for at most `graceMs`, then destroys what is left:
 * a cut transfer (the client sees a broken response, never a clean short one), through the same
 * path as a client that hangs up, so queries are interrupted and temp files removed.
 */
export async function shutDown(app: FastifyInstance, open: Set<ServerResponse>, graceMs: number): Promise<{ drained: number; cut: number }> {
  const started = Date.now();
  const atStart = open.size;
  app.log.info({ open: atStart, graceMs }, 'shutdown started: draining open responses');
  const closed = app.close();
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'grace over'>((resolve) => (timer = setTimeout(() => resolve('grace over'), graceMs)));
  let cut = 0;
  if ((await Promise.race([closed.then(() => 'closed' as const), graceOver])) === 'grace over') {
    cut = open.size;
    for (const res of open) res.destroy();
    app.server.closeAllConnections();
  }
  clearTimeout(timer);
  await closed;
  const result = { drained: atStart - cut, cut };
  app.log.info({ ...result, ms: Date.now() - started }, 'shutdown finished');
  return result;
}
