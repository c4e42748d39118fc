import { open, rm } from 'node:fs/promises';
import type { Reservation, TempBudget } from '../engine/temp-budget.ts';
import { ResponseTooLargeError } from '../errors.ts';
import { tempFileBase } from './copy-stream.ts';

/** Temp space is reserved for a spooled body in steps of this size as it grows. */
const RESERVE_STEP_BYTES = 16 * 1024 * 1024;

export interface SpoolOptions {
  tempDir: string;
  budget: TempBudget;
  signal: AbortSignal;
}

export interface SpooledBody {
  path: string;
  bytes: number;
  /** Removes the file and gives its temp space back. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * The whole body written into one temp file before anything is sent, so it can be sent with its
 * length: a reader that cannot see a chunked transfer break (HTTP/1.0, and every proxy that speaks
 * it to us) can still tell a cut from an end. The body's own end checks (promised rows written)
 * run before the file is complete, so a failure is still a status code. Space is reserved in the
 * temp budget as the file grows; a body larger than the whole budget can never be spooled.
 */
export async function spoolBody(body: AsyncIterable<string | Buffer>, opts: SpoolOptions): Promise<SpooledBody> {
  const path = `${tempFileBase(opts.tempDir)}-body`;
  const reservation = opts.budget.reserve(0);
  const dispose = async () => {
    reservation.release();
    await rm(path, { force: true });
  };
  try {
    const file = await open(path, 'wx');
    let bytes = 0;
    try {
      for await (const chunk of body) {
        opts.signal.throwIfAborted();
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        growFor(reservation, opts.budget, bytes + buffer.length);
        await file.write(buffer);
        bytes += buffer.length;
      }
    } finally {
      await file.close();
    }
    reservation.shrinkTo(bytes);
    return { path, bytes, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/**
 * Room for a file of `bytes`: a step at a time while the budget has room for it, else just what is
 * needed (which throws when that is not free); a file larger than the whole budget never fits.
 */
function growFor(reservation: Reservation, budget: TempBudget, bytes: number): void {
  if (bytes <= reservation.bytes) return;
  if (bytes > budget.maxBytes) throw new ResponseTooLargeError(budget.maxBytes);
  reservation.growTo(Math.max(bytes, reservation.bytes + Math.min(RESERVE_STEP_BYTES, budget.maxBytes - budget.usedBytes)));
}
