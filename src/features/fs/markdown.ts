// Markdown through /p while `filter_readme_scripts` is on (docs/decisions.md D8.7): the text stays
// Markdown (the web UI renders it), with every way to run script taken out. Raw HTML keeps only
// an allowlist of presentational tags and attributes; elements that run or embed (script, style,
// iframe, object, …) go with their content; URLs with script schemes, in HTML or in Markdown
// links, are replaced by `#`.

const DROPPED_WITH_CONTENT = [
  "script",
  "style",
  "iframe",
  "object",
  "embed",
  "frame",
  "frameset",
  "noscript",
  "template",
  "textarea",
  "title",
  "xmp",
  "noembed",
  "svg",
  "math",
  "select",
];

const ALLOWED_TAGS = new Set([
  "a",
  "abbr",
  "b",
  "blockquote",
  "br",
  "caption",
  "center",
  "code",
  "dd",
  "del",
  "details",
  "div",
  "dl",
  "dt",
  "em",
  "figcaption",
  "figure",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "i",
  "img",
  "ins",
  "kbd",
  "li",
  "mark",
  "ol",
  "p",
  "picture",
  "pre",
  "q",
  "s",
  "samp",
  "small",
  "source",
  "span",
  "strike",
  "strong",
  "sub",
  "summary",
  "sup",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "tr",
  "tt",
  "u",
  "ul",
  "video",
  "audio",
]);

const ALLOWED_ATTRIBUTES = new Set([
  "href",
  "src",
  "srcset",
  "alt",
  "title",
  "width",
  "height",
  "align",
  "colspan",
  "rowspan",
  "open",
  "controls",
  "name",
  "id",
  "start",
  "type",
  "media",
]);
const URL_ATTRIBUTES = new Set(["href", "src", "srcset"]);

/** Undoes the character references a browser or Markdown renderer would, to see the real scheme. */
function decodeReferences(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) =>
      String.fromCodePoint(Math.min(Number.parseInt(hex, 16), 0x10ffff)),
    )
    .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCodePoint(Math.min(Number(dec), 0x10ffff)))
    .replace(/&colon;/gi, ":")
    .replace(/&tab;|&newline;/gi, "");
}

/** javascript:, vbscript:, and data: other than raster images. */
function isScriptUrl(url: string): boolean {
  const plain = decodeReferences(url)
    .replace(/[\u0000-\u0020\u007f]/g, "")
    .toLowerCase();
  if (plain.startsWith("javascript:") || plain.startsWith("vbscript:")) return true;
  return plain.startsWith("data:") && !/^data:image\/(?:png|gif|jpe?g|webp);/.test(plain);
}

function sanitizeTag(tag: string, name: string, closing: boolean, attributes: string): string {
  if (!ALLOWED_TAGS.has(name)) return "";
  if (closing) return `</${name}>`;
  const kept: string[] = [];
  const pattern = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (const match of attributes.matchAll(pattern)) {
    const attribute = match[1]!.toLowerCase();
    if (!ALLOWED_ATTRIBUTES.has(attribute)) continue;
    const value = match[2] ?? match[3] ?? match[4] ?? "";
    if (URL_ATTRIBUTES.has(attribute) && isScriptUrl(value)) continue;
    kept.push(`${attribute}="${value.replace(/"/g, "&quot;")}"`);
  }
  const selfClosing = /\/\s*$/.test(tag.slice(0, -1)) ? " /" : "";
  return `<${name}${kept.length > 0 ? ` ${kept.join(" ")}` : ""}${selfClosing}>`;
}

export function sanitizeMarkdown(markdown: string): string {
  let text = markdown.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  for (const name of DROPPED_WITH_CONTENT) {
    text = text.replace(new RegExp(`<${name}\\b[\\s\\S]*?(?:</${name}\\s*>|$)`, "gi"), "");
  }
  text = text.replace(
    /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g,
    (tag, slash: string, name: string, attributes: string) =>
      sanitizeTag(tag, name.toLowerCase(), slash === "/", attributes),
  );
  // A `<` that opens no tag the browser would parse is left as text by the renderer; one that
  // starts a tag split over lines could still become one: escape any left.
  text = text.replace(/<(?=[a-zA-Z/!?])(?![a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?>|\/[a-zA-Z][a-zA-Z0-9-]*\s*>)/g, "&lt;");
  // Markdown links and images `[x](url)`, autolinks `<url>` and definitions `[x]: url`.
  text = text.replace(/(\]\(\s*<?)([^)\s>]*)/g, (all, open: string, url: string) =>
    isScriptUrl(url) ? `${open}#` : all,
  );
  text = text.replace(/^(\s{0,3}\[[^\]]+\]:\s*<?)(\S+)/gm, (all, open: string, url: string) =>
    isScriptUrl(url) ? `${open}#` : all,
  );
  return text;
}
