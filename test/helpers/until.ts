/**
 * Polls `check` until it holds (the state a test means, e.g. a background rendering done), failing
 * only after a generous bound that a loaded machine never reaches.
 */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (await check()) return true;
  return false;
}
