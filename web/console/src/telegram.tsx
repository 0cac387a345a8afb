// Renders a Telegram MarkdownV2 message as Telegram shows it: entities
// become formatting, escapes become their characters. It builds elements,
// never HTML strings, so message text cannot inject markup.
import type { ComponentChildren, VNode } from "preact";

type Node = string | VNode;

const wrappers: [string, (c: ComponentChildren) => VNode][] = [
  ["||", (c) => <span class="tg-spoiler">{c}</span>],
  ["__", (c) => <u>{c}</u>],
  ["*", (c) => <strong>{c}</strong>],
  ["_", (c) => <em>{c}</em>],
  ["~", (c) => <s>{c}</s>],
];

/** parse reads s from i until the closing marker end (or the end of s). */
function parse(s: string, i: number, end: string): [Node[], number] {
  const out: Node[] = [];
  let text = "";
  const flush = () => {
    if (text) out.push(...autolink(text));
    text = "";
  };
  while (i < s.length) {
    if (end && s.startsWith(end, i) && !(end === "_" && s.startsWith("__", i))) {
      flush();
      return [out, i + end.length];
    }
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (s.startsWith("```", i)) {
      const close = s.indexOf("```", i + 3);
      if (close > 0) {
        flush();
        let body = s.slice(i + 3, close);
        const nl = body.indexOf("\n");
        if (nl >= 0 && /^[\w+-]*$/.test(body.slice(0, nl))) body = body.slice(nl + 1);
        out.push(<pre>{unescape(body)}</pre>);
        i = close + 3;
        continue;
      }
    }
    if (c === "`") {
      const close = findUnescaped(s, "`", i + 1);
      if (close > 0) {
        flush();
        out.push(<code>{unescape(s.slice(i + 1, close))}</code>);
        i = close + 1;
        continue;
      }
    }
    if (c === "[") {
      const [label, j] = parse(s, i + 1, "]");
      if (s[j] === "(") {
        const close = findUnescaped(s, ")", j + 1);
        if (close > 0) {
          flush();
          const url = unescape(s.slice(j + 1, close));
          const safe = /^(https?:|tg:|mailto:)/i.test(url) ? url : undefined;
          out.push(
            <a href={safe} rel="noopener noreferrer" target="_blank">
              {label}
            </a>,
          );
          i = close + 1;
          continue;
        }
      }
    }
    const w = wrappers.find(([m]) => s.startsWith(m, i));
    if (w) {
      flush();
      const [inner, j] = parse(s, i + w[0].length, w[0]);
      out.push(w[1](inner));
      i = j;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  return [out, i];
}

const bareURL = /https?:\/\/[^\s<>"]+/g;

/**
 * autolink turns the URLs in plain text into links, as Telegram's clients
 * do; punctuation that ends a sentence stays outside the link.
 */
function autolink(text: string): Node[] {
  const out: Node[] = [];
  let last = 0;
  for (const m of text.matchAll(bareURL)) {
    const url = m[0].replace(/[.,;:!?)\]]+$/, "");
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    out.push(
      <a href={url} rel="noopener noreferrer" target="_blank">
        {url}
      </a>,
    );
    last = at + url.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function findUnescaped(s: string, ch: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === ch) return i;
  }
  return -1;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/gs, "$1");
}

/** TelegramMessage shows a message: MarkdownV2 rendered, anything else as plain text. */
export function TelegramMessage({ text, parseMode }: { text: string; parseMode?: string }) {
  const body = parseMode === "MarkdownV2" ? parse(text, 0, "")[0] : [text];
  return <div class="tg-message">{body}</div>;
}

export { parse as parseMarkdownV2 };
