// The part of autocannon 9's API the bench uses (the package ships no types; @types/autocannon lags behind).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
  }

  interface Client {
    setRequests(requests: Request[]): void;
    /** Each response, once complete: status, bytes, milliseconds from request to last byte. */
    on(event: 'response', listener: (statusCode: number, bytes: number, durationMs: number) => void): Client;
    /** Each response's head: `headers` is the raw list, name and value alternating. */
    on(event: 'headers', listener: (head: { statusCode: number; headers: string[] }) => void): Client;
  }

  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    requests?: Request[];
    setupClient?: (client: Client) => void;
  }

  interface Result {
    duration: number;
    requests: Histogram & { sent: number };
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  /** The instance is an EventEmitter whose promise side is a bare thenable: the callback form is the dependable one. */
  function autocannon(options: Options, done: (error: Error | null, result: Result) => void): { stop(): void };
  export default autocannon;
  export type { Client, Options, Request, Result };
}
