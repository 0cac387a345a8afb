// Markdown for research reports. Reports hold model output, so raw HTML in
// them is shown as text, never interpreted, and only http(s) and mailto
// links are kept.
import { Marked, type Tokens } from "marked";

const escapeHTML = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const md = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html(t: Tokens.HTML | Tokens.Tag) {
      return escapeHTML(t.text);
    },
    link(t: Tokens.Link) {
      const text = this.parser.parseInline(t.tokens);
      if (!/^(https?:|mailto:)/i.test(t.href)) return text;
      return `<a href="${escapeHTML(t.href)}" rel="noopener noreferrer" target="_blank">${text}</a>`;
    },
    image(t: Tokens.Image) {
      return escapeHTML(t.text);
    },
  },
});

/** Markdown renders trusted-structure, untrusted-content Markdown. */
export function Markdown({ source }: { source: string }) {
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: md.parse(source) as string }} />;
}
