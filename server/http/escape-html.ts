/** Text for HTML (element content and quoted attributes): the pages of the documentation and of the OGC API use it. */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
