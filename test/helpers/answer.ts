/**
 * Headers two servers over the same data must send alike: all X- headers but the caller's rate limit,
 * which counts per request. The length only of a body sent as is: compressed, it depends on how the
 * body was cut into writes (the content and its encoding are compared instead).
 */
const compared = (name: string, coded: boolean) =>
  ['content-type', 'content-encoding', 'etag'].includes(name) || (name === 'content-length' && !coded) || (name.startsWith('x-') && !name.startsWith('x-ratelimit-'));

/**
 * An answer as two ways of serving the same window must give it: status, the headers compared, and
 * the body (the chain's age, which moves with the clock, zeroed).
 */
export async function comparableAnswer(r: Response) {
  const coded = r.headers.has('content-encoding');
  const headers = Object.fromEntries([...r.headers].filter(([name]) => compared(name, coded)));
  const body = Buffer.from(await r.arrayBuffer()).toString('latin1').replace(/"ageSeconds":\d+/g, '"ageSeconds":0');
  return { status: r.status, returned: r.headers.get('x-returned'), etag: r.headers.get('etag'), next: r.headers.get('x-next-from'), headers, body };
}
