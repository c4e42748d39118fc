import { PassThrough } from 'node:stream';

export interface CapturedLogs {
  stream: PassThrough;
  /** Every JSON line logged so far. */
  lines(): Record<string, unknown>[];
}

/** A pino destination that keeps what the server logs, for tests about what is (not) logged. */
export function captureLogs(): CapturedLogs {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  const lines = () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { stream, lines };
}
