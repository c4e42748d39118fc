/** Headers two servers over the same data must send alike: all X- headers but the caller's rate limit, which counts per request. */
const compared = (name: string) => ['content-type', 'content-length', 'etag'].includes(name) || (name.startsWith('x-') && !name.startsWith('x-ratelimit-'));

/**
 * An answer as two ways of serving the same window must give it: status, the headers compared, and
 * the body (the chain's age, which moves with the clock, zeroed).
 */
export async function comparableAnswer(r: Response) {
  const headers = Object.fromEntries([...r.headers].filter(([name]) => compared(name)));
  const body = Buffer.from(await r.arrayBuffer()).toString('latin1').replace(/"ageSeconds":\d+/g, '"ageSeconds":0');
  return { status: r.status, returned: r.headers.get('x-returned'), etag: r.headers.get('etag'), next: r.headers.get('x-next-from'), headers, body };
}
