import net from 'node:net';

/**
 * A TCP relay in front of nginx that counts the response bytes its clients receive and runs an
 * action the moment a count is reached: a node is killed at a known offset into a body whatever
 * the client (curl, fetch, the extract client in its own process). It only moves bytes: an end
 * from nginx is passed on as an end, a reset as a reset, so each client sees exactly how nginx
 * finished its response.
 *
 * The clients are not slowed down on purpose: on loopback the kernel's socket buffers grow to
 * tens of MB behind a slow reader, so a node would hand its whole page to the kernel before the
 * reader got far. A reader that keeps up leaves the node the slow side, still writing when killed.
 */
export class ResponseTap {
  private server: net.Server | null = null;
  private forwarded = 0;
  private readonly sockets = new Set<net.Socket>();
  private pending: { at: number; action: () => void } | null = null;

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    const server = net.createServer((client) => this.relay(client));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Runs `action` once `bytes` more response bytes (headers and framing included) have passed. */
  after(bytes: number, action: () => void): void {
    this.pending = { at: this.forwarded + bytes, action };
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(Number(this.target.port), this.target.hostname);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    }
    client.pipe(upstream);
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => client.resetAndDestroy());
    upstream.on('end', () => client.end());
    upstream.on('data', (chunk: Buffer) => {
      this.forwarded += chunk.length;
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
      const due = this.pending;
      if (due && this.forwarded >= due.at) {
        this.pending = null;
        due.action();
      }
    });
  }
}
