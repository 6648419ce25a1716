// The WebDAV server's XML reader (xml.ts parseXml, docs/decisions.md D27.3) against saxes, the
// library it replaced (a devDependency for this test): the same tree for every well-formed body of a
// fixed corpus (litmus's and real clients' bodies), a refusal for every malformed one, and the same
// verdict on thousands of bodies made by cutting and splicing the corpus.
import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { BadXml, escapeText, escapeXml, parseXml, type XmlElement } from "./xml.ts";

/** The tree saxes reads, built as the server built it before. */
function saxesTree(text: string): XmlElement | null {
  if (text.trim() === "") return null;
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  parser.on("error", (error) => {
    throw error;
  });
  parser.on("doctype", () => {
    throw new Error("doctype");
  });
  parser.on("opentag", (tag) => {
    const element: XmlElement = {
      ns: tag.uri ?? "",
      local: tag.local ?? tag.name,
      attributes: Object.values(tag.attributes)
        .filter((attribute) => attribute.prefix !== "xmlns" && attribute.name !== "xmlns")
        .map((attribute) => ({ ns: attribute.uri, local: attribute.local, value: attribute.value })),
      children: [],
    };
    if (stack.length > 0) stack.at(-1)!.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on("text", (text) => stack.at(-1)?.children.push(text));
  parser.on("cdata", (text) => stack.at(-1)?.children.push(text));
  parser.on("closetag", () => void stack.pop());
  parser.write(text).close();
  if (!root) throw new Error("no root");
  return root;
}

const verdict = (read: (text: string) => XmlElement | null, text: string) => {
  try {
    return { tree: read(text) };
  } catch {
    return "refused";
  }
};

const DECL = '<?xml version="1.0" encoding="utf-8" ?>\n';
const WELL_FORMED = [
  `${DECL}<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`,
  `${DECL}<propfind xmlns="DAV:"><propname/></propfind>`,
  `<?xml version='1.0' standalone='yes'?><D:propfind xmlns:D="DAV:">\r\n  <D:prop>\r\n    <D:getcontentlength/>\n\t<D:resourcetype/>\n  </D:prop>\n</D:propfind>\n`,
  // litmus props: many namespaces, the same local name in two, prefixes rebound, high code points.
  `<?xml version="1.0" encoding="utf-8" ?><propertyupdate xmlns="DAV:"><set><prop><prop0 xmlns="http://example.com/neon/litmus/">value0</prop0><prop1 xmlns="http://example.com/neon/litmus/">value1</prop1></prop></set></propertyupdate>`,
  `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://example.com/alpha"><D:set><D:prop><Z:foo xmlns:Z="http://example.com/beta">bar</Z:foo><Z:foo>baz</Z:foo></D:prop></D:set><D:remove><D:prop><Z:gone/></D:prop></D:remove></D:propertyupdate>`,
  `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><high-unicode xmlns="http://example.com/neon/litmus/">&#65536;&#x10FFFF;\u{1F600}é€</high-unicode></D:prop></D:set></D:propertyupdate>`,
  `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><valnspace xmlns="http://example.com/neon/litmus/"><foo xmlns="bar"/></valnspace><removens xmlns="http://example.com/neon/litmus/"><foo xmlns="http://bar"/></removens></D:prop></D:set></D:propertyupdate>`,
  `<D:propertyupdate xmlns:D="DAV:" xmlns:x="urn:x"><D:set><D:prop><x:p xml:lang="en-GB" x:a="1" b="2 &amp; &lt;3&gt; &quot;q&quot; &apos;a&apos;" c='tab\there&#9;&#10;&#13;'>a &amp; b &lt; c &#x3C; &#60; d</x:p></D:prop></D:set></D:propertyupdate>`,
  `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><t xmlns="urn:t"><![CDATA[<not> & markup ]] ]>]]>after<![CDATA[]]></t></D:prop></D:set></D:propertyupdate>`,
  `<!-- a comment first --><?pi some data?><D:lockinfo xmlns:D="DAV:"><!-- inside --><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner><D:href>http://example.org/~ejw/contact.html</D:href></D:owner></D:lockinfo><!-- after --><?after?>\n`,
  `<D:lockinfo xmlns:D='DAV:'><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>litmus test suite</D:owner></D:lockinfo>`,
  `<a xmlns="urn:a"><b xmlns=""><c/></b><d:e xmlns:d="urn:d" d:f="1" f="2"/></a>`,
  `<a\n  x = "1"\n  y\t=\t'2'\n></a \n>`,
  `<_.-a:b-c.d_ xmlns:_.-a="urn:u"><名前 属性="値">テキスト</名前></_.-a:b-c.d_>`,
  `<a>]]</a>`,
  `<a> > </a>`,
  `<a>text<!--c-->more<?p?>end</a>`,
  `<x:a xmlns:x="urn:x"><x:b xmlns:x="urn:y"/><x:c/></x:a>`,
  `<a xml:space="preserve" xmlns:xml="http://www.w3.org/XML/1998/namespace"/>`,
  `<a>${"<b>deep</b>".repeat(50)}</a>`,
];
const MALFORMED = [
  "hello",
  "<a><b></a>",
  '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
  '<!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>',
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>',
  "<D:propfind/>",
  "<a/><b/>",
  "<a/>text",
  "text<a/>",
  "<a>&nbsp;</a>",
  "<a>&amp</a>",
  "<a>& b</a>",
  "<a>&#0;</a>",
  "<a>&#xD800;</a>",
  "<a>&#x110000;</a>",
  "<a>&#;</a>",
  "<a>&#x;</a>",
  "<a>\u0001</a>",
  "<a>\uFFFE</a>",
  "<a b=1/>",
  '<a b="1" b="2"/>',
  '<a xmlns:p="urn:x" xmlns:q="urn:x" p:b="1" q:b="2"/>',
  '<a xmlns:p=""/>',
  '<a xmlns:xmlns="urn:x"/>',
  '<a xmlns:xml="urn:x"/>',
  '<a xmlns="http://www.w3.org/XML/1998/namespace"/>',
  "<a><!-- a -- b --></a>",
  "<a><!-- a ---></a>",
  ` ${DECL}<a/>`,
  `<a/>${DECL}`,
  '<?xml version="2.0"?><a/>',
  '<?xml encoding="utf-8"?><a/>',
  "<a>]]></a>",
  '<a b="<"/>',
  "<1a/>",
  "<a:b:c xmlns:a='urn:a'/>",
  "<:a/>",
  "<a:/>",
  "<![CDATA[x]]><a/>",
  "<a><![CDATA[x</a>",
  "<a><!-- open</a>",
  "<a><?pi open</a>",
  "<a",
  "<a b",
  '<a b="1"',
  "<a></b>",
  "</a>",
  "<a>",
  "<a></a",
  "<a/ >",
  '<a b="1"c="2"/>',
  "<a><!ELEMENT a ANY></a>",
  "<a ‿='1'/>",
];

describe("parseXml against saxes", () => {
  it.each(WELL_FORMED.map((text) => [text.slice(0, 60), text]))("reads %s as saxes does", (_, text) => {
    expect(parseXml(text)).toEqual(saxesTree(text));
  });

  it.each(MALFORMED.map((text) => [text, text]))("refuses %s, as saxes does", (_, text) => {
    expect(() => saxesTree(text)).toThrow();
    expect(() => parseXml(text)).toThrow(BadXml);
  });

  it("says where and why", () => {
    expect(() => parseXml('<a>\n  <b x="1">&bogus;</b></a>')).toThrow("2:12: undefined entity &bogus;");
    expect(() => parseXml("<a>\n<b></a>")).toThrow("2:8: end tag a closes b");
    expect(() => parseXml('<!DOCTYPE a [<!ENTITY x "y">]><a/>')).toThrow("DOCTYPE is not accepted");
    expect(() => parseXml("<!-- only a comment -->")).toThrow("no root element");
  });

  it("refuses nesting past 100 levels, which no WebDAV body needs", () => {
    expect(parseXml(`${"<a>".repeat(100)}${"</a>".repeat(100)}`)).not.toBeNull();
    expect(() => parseXml(`${"<a>".repeat(101)}${"</a>".repeat(101)}`)).toThrow("nested deeper than 100");
  });

  it("reads a megabyte of properties in one pass", () => {
    const body = `<D:propfind xmlns:D="DAV:"><D:prop>${"<D:displayname/>".repeat(65_000)}</D:prop></D:propfind>`;
    const started = performance.now();
    expect((parseXml(body)!.children[0] as XmlElement).children).toHaveLength(65_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("gives saxes's verdict on bodies cut and spliced from the corpus", () => {
    // A fixed seed: the same bodies on every run.
    let seed = 20261207;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = ["<", ">", "/", "&", ";", ":", "=", '"', "'", "!", "?", "-", "]]>", "&amp;", "&#", "xmlns", " "];
    const sources = [...WELL_FORMED, ...MALFORMED.filter((text) => !text.includes("DOCTYPE"))];
    let compared = 0;
    for (let i = 0; i < 4000; i++) {
      let text = sources[random(sources.length)]!;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const cut = random(4);
        const insert = random(2) === 0 ? pieces[random(pieces.length)]! : "";
        text = text.slice(0, at) + insert + text.slice(at + cut);
      }
      if (text.trim() === "" || /<!DOCTYPE/i.test(text)) continue;
      expect({ text, verdict: verdict(parseXml, text) }).toEqual({ text, verdict: verdict(saxesTree, text) });
      compared++;
    }
    expect(compared).toBeGreaterThan(3500);
  });
});

describe("escapeText", () => {
  it("leaves quotes as they are in text, escapes what text cannot hold, and reads back the same", () => {
    expect(escapeText('"5f1e-400"')).toBe('"5f1e-400"');
    expect(escapeText('a & b <c> "d"\r')).toBe('a &amp; b &lt;c&gt; "d"&#13;');
    expect(escapeXml('"d"')).toBe("&quot;d&quot;");
    const value = 'W/"x&y<z>"\r';
    const root = parseXml(`<D:getetag xmlns:D="DAV:">${escapeText(value)}</D:getetag>`)!;
    expect(root.children.join("")).toBe(value);
  });
});
