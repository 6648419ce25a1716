// The LDAP client's encodings, byte for byte: BER lengths and integers (X.690), the filter string
// form to BER (RFC 4515 / RFC 4511 section 4.5.1), the user name's escaping, the requests' shapes.
import { describe, expect, it } from "vitest";
import { elementLength, integer, octets, readElement, readElements, readInteger, tlv } from "./ber.ts";
import {
  bindRequest,
  message,
  parseServer,
  searchRequest,
  START_TLS_OID,
  startTlsRequest,
  unbindRequest,
} from "./client.ts";
import { encodeFilter, escapeFilterValue, FilterError, nameAttribute, userFilter } from "./filter.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const ascii = (text: string) => Buffer.from(text, "utf8").toString("hex");

describe("BER", () => {
  it("writes integers in their shortest two's complement form", () => {
    expect(hex(integer(0))).toBe("020100");
    expect(hex(integer(3))).toBe("020103");
    expect(hex(integer(127))).toBe("02017f");
    expect(hex(integer(128))).toBe("02020080");
    expect(hex(integer(256))).toBe("02020100");
    expect(hex(integer(-1))).toBe("0201ff");
    expect(hex(integer(-129))).toBe("0202ff7f");
    for (const value of [0, 1, 127, 128, 255, 256, 65_535, 2 ** 31, -1, -128, -129])
      expect(readInteger(readElement(integer(value)))).toBe(value);
  });

  it("writes short and long definite lengths and reads them back", () => {
    expect(hex(octets("abc"))).toBe("0403616263");
    const long = octets("x".repeat(200));
    expect(hex(long.subarray(0, 3))).toBe("0481c8");
    const longer = octets("y".repeat(300));
    expect(hex(longer.subarray(0, 4))).toBe("0482012c");
    expect(elementLength(longer)).toBe(304);
    expect(elementLength(longer.subarray(0, 3))).toBe(-1);
    expect(readElement(longer).content.length).toBe(300);
  });

  it("refuses the indefinite form and elements running past their container", () => {
    expect(() => elementLength(new Uint8Array([0x30, 0x80]))).toThrow(/length/);
    expect(() => readElements(new Uint8Array([0x04, 0x05, 0x61]))).toThrow(/past its container/);
  });
});

describe("the user name in the filter", () => {
  it("escapes *, (, ), \\ and NUL (RFC 4515 section 3) and nothing else", () => {
    expect(escapeFilterValue("a*b(c)d\\e\0f")).toBe("a\\2ab\\28c\\29d\\5ce\\00f");
    expect(escapeFilterValue("jöhn.doe@x=y,z")).toBe("jöhn.doe@x=y,z");
  });

  it("puts the escaped name into every %s of the template", () => {
    expect(userFilter("(uid=%s)", "*)(uid=*))(|(uid=*")).toBe("(uid=\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a)");
    expect(userFilter("(|(uid=%s)(mail=%s))", "a$&b")).toBe("(|(uid=a$&b)(mail=a$&b))");
  });

  it("encodes an injected name as one equality assertion of the literal text", () => {
    for (const name of ["*", "admin)(|(uid=*", "*)(uid=*))(|(uid=*", "al*"]) {
      const encoded = encodeFilter(userFilter("(uid=%s)", name));
      expect(hex(encoded), name).toBe(hex(tlv(0xa3, octets("uid"), octets(name))));
    }
  });
});

describe("the name attribute of a template", () => {
  it("is the attribute compared with %s, if any", () => {
    expect(nameAttribute("(uid=%s)")).toBe("uid");
    expect(nameAttribute("(&(objectClass=person)(sAMAccountName=%s))")).toBe("sAMAccountName");
    expect(nameAttribute("(mail=%s@example.org)")).toBeNull();
    expect(nameAttribute("(cn=*%s*)")).toBeNull();
  });
});

describe("filters to BER", () => {
  it("encodes equality, presence, substrings, ordering and approximate matches", () => {
    expect(hex(encodeFilter("(uid=alice)"))).toBe(`a30c0403${ascii("uid")}0405${ascii("alice")}`);
    expect(hex(encodeFilter("(objectClass=*)"))).toBe(`870b${ascii("objectClass")}`);
    expect(hex(encodeFilter("(cn=ab*cd*ef)"))).toBe(
      `a4120402${ascii("cn")}300c8002${ascii("ab")}8102${ascii("cd")}8202${ascii("ef")}`,
    );
    expect(hex(encodeFilter("(cn=*x)"))).toBe(`a4090402${ascii("cn")}30038201${ascii("x")}`);
    expect(hex(encodeFilter("(uidNumber>=10)"))).toBe(`a50f0409${ascii("uidNumber")}0402${ascii("10")}`);
    expect(hex(encodeFilter("(uidNumber<=10)"))).toBe(`a60f0409${ascii("uidNumber")}0402${ascii("10")}`);
    expect(hex(encodeFilter("(cn~=al)"))).toBe(`a8080402${ascii("cn")}0402${ascii("al")}`);
  });

  it("encodes and, or and not around their filters, and decodes escapes in values", () => {
    const alice = tlv(0xa3, octets("uid"), octets("alice"));
    const person = tlv(0xa3, octets("objectClass"), octets("person"));
    expect(hex(encodeFilter("(&(objectClass=person)(uid=alice))"))).toBe(hex(tlv(0xa0, person, alice)));
    expect(hex(encodeFilter("(|(uid=alice)(!(objectClass=person)))"))).toBe(hex(tlv(0xa1, alice, tlv(0xa2, person))));
    expect(hex(encodeFilter("(cn=a\\2ab\\00\\5C)"))).toBe(
      hex(tlv(0xa3, octets("cn"), octets(new Uint8Array([0x61, 0x2a, 0x62, 0, 0x5c])))),
    );
    expect(hex(encodeFilter("uid=alice"))).toBe(hex(alice));
  });

  it("refuses what is no filter", () => {
    for (const bad of [
      "(uid=alice",
      "(uid=a)b",
      "(&)",
      "(!(a=b)(c=d))",
      "(uid=a\\zz)",
      "(uid=a(b)",
      "(=x)",
      "(a:dn:=x)",
      "(cn=a**b)",
    ])
      expect(() => encodeFilter(bad), bad).toThrow(FilterError);
  });
});

describe("requests", () => {
  it("writes a simple bind, an unbind and StartTLS as RFC 4511 lays them out", () => {
    expect(hex(message(1, bindRequest("cn=m", "pw")))).toBe(
      `3012020101600d0201030404${ascii("cn=m")}8002${ascii("pw")}`,
    );
    expect(hex(message(2, unbindRequest()))).toBe("30050201024200");
    expect(hex(startTlsRequest())).toBe(`7718${hex(octets(START_TLS_OID, 0x80))}`);
  });

  it("asks for the values of named attributes", () => {
    const elements = readElements(readElement(searchRequest("ou=people", "(uid=a)", 10, ["uid"])).content);
    expect(hex(elements[5]!.content)).toBe("00");
    expect(hex(tlv(elements[7]!.tag, elements[7]!.content))).toBe(`3005${hex(octets("uid"))}`);
  });

  it("writes a subtree search for one name asking for no attributes", () => {
    const [base, scope, deref, size, time, typesOnly, filter, attributes] = readElements(
      readElement(searchRequest("ou=people", "(uid=a)", 10)).content,
    );
    expect(Buffer.from(base!.content).toString()).toBe("ou=people");
    expect([readInteger(scope!), readInteger(deref!), readInteger(size!), readInteger(time!)]).toEqual([2, 0, 2, 10]);
    expect(hex(typesOnly!.content)).toBe("ff");
    expect(filter!.tag).toBe(0xa3);
    expect(hex(tlv(attributes!.tag, attributes!.content))).toBe(`3005${hex(octets("1.1"))}`);
  });
});

describe("ldap_server", () => {
  it("takes ldap:// and ldaps:// with their default ports, and IPv6 in brackets", () => {
    expect(parseServer("ldap://dir.example")).toEqual({ hostname: "dir.example", port: 389, tls: false });
    expect(parseServer("ldaps://dir.example")).toEqual({ hostname: "dir.example", port: 636, tls: true });
    expect(parseServer("LDAP://10.0.0.1:1389/")).toEqual({ hostname: "10.0.0.1", port: 1389, tls: false });
    expect(parseServer("ldaps://[2001:db8::1]:6360")).toEqual({ hostname: "2001:db8::1", port: 6360, tls: true });
  });

  it("refuses anything else", () => {
    for (const bad of [
      "",
      "dir.example:389",
      "http://dir.example",
      "ldap://dir.example:0",
      "ldap://dir.example:99999",
      "ldap://u@dir",
    ])
      expect(() => parseServer(bad), bad).toThrow(/ldap_server/);
  });
});
