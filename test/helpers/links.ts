/** Every `href` (and JSON Schema `$id`) in a JSON body, at any depth. */
function hrefs(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => hrefs(v, into));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'href' || k === '$id') && typeof v === 'string') into.push(v);
      else hrefs(v, into);
    }
  }
  return into;
}

/** The targets of an RFC 8288 Link header: `<url>; rel=...` items. */
export const linkHeaderTargets = (header: string | undefined): string[] => [...(header ?? '').matchAll(/<([^>]*)>/g)].map((m) => m[1]!);

/** The links an answer carries: every href of its JSON body and every target of its Link header. */
export function absoluteLinks(answer: { headers: Record<string, string | undefined>; body: string }): string[] {
  const json = answer.body.trim().startsWith('{') ? hrefs(JSON.parse(answer.body)) : [];
  return [...json, ...linkHeaderTargets(answer.headers.link)];
}

/** The href and src values of a page (entities decoded as a browser would), and the base its scripts build URLs on. */
export function pageLinks(html: string): { links: string[]; base: string | null } {
  const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  const links = [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => decode(m[1]!));
  const base = /\sdata-base="([^"]*)"/.exec(html)?.[1];
  return { links, base: base === undefined ? null : decode(base) };
}
