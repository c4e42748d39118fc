import path from 'node:path';
import { SUITE_TREE } from '../helpers/compiled-tree.ts';
import { freePort } from '../../bench/server/server-process.ts';
import { issueKey } from '../../server/keys/key-admin.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { TEST_HOLDER } from '../helpers/server.ts';
import { Node, unitEnvironment } from './nodes.ts';

/**
 * Two `fire-api serve` nodes as the shipped systemd unit starts them, sharing one DATA_DIR, one
 * KEYS_FILE and one redis-server, each with its own TEMP_DIR.
 */
export class Cluster {
  private constructor(
    readonly nodes: readonly Node[],
    private readonly redis: RedisServer,
    private readonly keys: string[],
  ) {}

  /** `env`: what the operator adds to the shipped environment file; `keys`: how many to issue. */
  static async start(redisProgram: string, dataDir: string, env: Record<string, string>, keys: number): Promise<Cluster> {
    const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
    const issued: string[] = [];
    for (let i = 0; i < keys; i++) issued.push((await issueKey(keysFile, TEST_HOLDER, 30)).key);
    const redis = await startRedis(redisProgram);
    // The nodes run the suite's compiled tree, as the shipped unit runs `dist` (systemd-unit.test.ts checks that unit).
    const site = { dataDir, keysFile, redisUrl: redis.url, cacheDir: await tempDir('fire-api-cache-'), compiledDir: SUITE_TREE };
    const nodes: Node[] = [];
    for (const name of ['node-a', 'node-b']) {
      const port = await freePort();
      nodes.push(new Node(name, port, { ...(await unitEnvironment(port, site)), ...env }));
    }
    const cluster = new Cluster(nodes, redis, issued);
    await cluster.ensureRunning();
    return cluster;
  }

  get addresses(): string[] {
    return this.nodes.map((n) => n.address);
  }

  /** A key no request has used yet: each round has the whole per-key budget. */
  takeKey(): string {
    const key = this.keys.shift();
    if (!key) throw new Error('no unused key left: issue more');
    return key;
  }

  /** The one node with a data request under way (arrived, not yet completed), or null. */
  serving(): Node | null {
    const busy = this.nodes.filter((n) => n.running && n.openDataRequests() > 0);
    if (busy.length > 1) throw new Error(`${busy.length} nodes are serving data requests; a round sends one at a time`);
    return busy[0] ?? null;
  }

  /** Starts every node that is not running (killed by a round), both at once. */
  async ensureRunning(): Promise<void> {
    await Promise.all(this.nodes.filter((n) => !n.running).map((n) => n.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    await this.redis.stop();
  }
}
