import { expect } from 'vitest';
import type { Cluster } from './cluster.ts';
import type { Nginx } from './nginx.ts';
import type { Node } from './nodes.ts';
import type { ResponseTap } from './tap.ts';

export interface Proxy {
  nginx: Nginx;
  tap: ResponseTap;
  /** nginx's address, through the tap that counts what clients receive. */
  url: string;
}

/** The nodes and the proxy a round goes through. */
export interface Setup {
  cluster: Cluster;
  proxy: Proxy;
}

/** What happened to the node serving a request once the tap's count was reached. */
export interface Struck<T> {
  node: Node;
  result: Promise<T>;
  atMs: number;
}

/** Once `offset` more response bytes have reached the client, does `act` to the node serving it. */
export function strikeAt<T>(setup: Setup, offset: number, act: (node: Node) => Promise<T>): { struck: Struck<T> | null } {
  const hit: { struck: Struck<T> | null } = { struck: null };
  setup.proxy.tap.after(offset, () => {
    const node = setup.cluster.serving();
    if (node) hit.struck = { node, result: act(node), atMs: Date.now() };
  });
  return hit;
}

/**
 * Runs `client` through the tap and SIGKILLs the node serving it once `offset` response bytes have
 * reached the client; says from the node's own log whether it died with that response unfinished
 * (`cut`: the round tested a cut) or had already written all of it into the socket buffers between
 * it and the client (a loaded machine's reader can lag that far behind); starts it again for the
 * next round.
 */
export async function killRound<T>(setup: Setup, offset: number, client: () => Promise<T>): Promise<{ result: T; cut: boolean }> {
  const hit = strikeAt(setup, offset, (node) => node.kill());
  try {
    const result = await client();
    const killed = hit.struck;
    expect(killed, `no node was serving when ${offset} bytes had passed`).not.toBeNull();
    await killed!.result;
    return { result, cut: killed!.node.openDataRequests() > 0 };
  } finally {
    await setup.cluster.ensureRunning();
  }
}
