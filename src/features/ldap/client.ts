// A small LDAPv3 client over Workers TCP sockets (`cloudflare:sockets`): simple binds, one subtree
// search, unbind; LDAPS (TLS from the first byte) and StartTLS. Written here because LDAP client
// libraries reach TCP through node:net, which workerd does not have (docs/decisions.md D21.1).
// Every operation shares one deadline; a failure is an LdapError whose text says what happened
// and never carries a password.
import { concatBytes } from "../../lib/streams.ts";
import {
  BerError,
  boolean,
  elementLength,
  enumerated,
  integer,
  octets,
  readElement,
  readElements,
  readInteger,
  readText,
  sequence,
  tlv,
  type Element,
} from "./ber.ts";
import { encodeFilter } from "./filter.ts";

export class LdapError extends Error {
  override name = "LdapError";
}

/** RFC 4511 result codes the sign-in tells apart. */
export const ResultCode = {
  SUCCESS: 0,
  SIZE_LIMIT_EXCEEDED: 4,
  NO_SUCH_OBJECT: 32,
  INVALID_CREDENTIALS: 49,
} as const;

/** StartTLS's extended operation (RFC 4511 section 4.14). */
export const START_TLS_OID = "1.3.6.1.4.1.1466.20037";

/** Protocol op tags ([APPLICATION n], constructed unless noted). */
const Op = {
  BIND_REQUEST: 0x60,
  BIND_RESPONSE: 0x61,
  UNBIND_REQUEST: 0x42,
  SEARCH_REQUEST: 0x63,
  SEARCH_ENTRY: 0x64,
  SEARCH_DONE: 0x65,
  SEARCH_REFERENCE: 0x73,
  EXTENDED_REQUEST: 0x77,
  EXTENDED_RESPONSE: 0x78,
} as const;

/** Largest message read: a search asking for no attributes answers a few hundred bytes per entry. */
const MAX_MESSAGE_BYTES = 1 << 20;

export interface LdapTarget {
  hostname: string;
  port: number;
  /** `ldaps://`: TLS from the first byte. */
  tls: boolean;
}

/** `ldap://host[:389]` or `ldaps://host[:636]`; anything else is a configuration mistake. */
export function parseServer(server: string): LdapTarget {
  const match = /^(ldaps?):\/\/(\[[^\]]+\]|[^:/?#@]+)(?::(\d{1,5}))?\/?$/i.exec(server.trim());
  if (!match) throw new LdapError(`ldap_server "${server}" is not ldap://host:port or ldaps://host:port`);
  const tls = match[1]!.toLowerCase() === "ldaps";
  const port = match[3] === undefined ? (tls ? 636 : 389) : Number(match[3]);
  if (port < 1 || port > 65535) throw new LdapError(`ldap_server "${server}" has no valid port`);
  return { hostname: match[2]!.replace(/^\[|\]$/g, ""), port, tls };
}

/** The LDAPMessage envelope around one request. */
export function message(id: number, op: Uint8Array): Uint8Array {
  return sequence(integer(id), op);
}

export const bindRequest = (dn: string, password: string) =>
  tlv(Op.BIND_REQUEST, integer(3), octets(dn), octets(password, 0x80));

export const unbindRequest = () => tlv(Op.UNBIND_REQUEST);

export const startTlsRequest = () => tlv(Op.EXTENDED_REQUEST, octets(START_TLS_OID, 0x80));

/**
 * A subtree search for at most two entries (the sign-in needs exactly one) asking for `attributes`,
 * or for none ("1.1", RFC 4511 section 4.5.1.8) when that is empty.
 */
export const searchRequest = (
  base: string,
  filter: string,
  timeLimitSeconds: number,
  attributes: readonly string[] = [],
) =>
  tlv(
    Op.SEARCH_REQUEST,
    octets(base),
    enumerated(2), // wholeSubtree
    enumerated(0), // neverDerefAliases
    integer(2),
    integer(timeLimitSeconds),
    boolean(attributes.length === 0),
    encodeFilter(filter),
    sequence(...(attributes.length === 0 ? ["1.1"] : attributes).map((name) => octets(name))),
  );

/** An entry a search found: its DN and the values of the attributes asked for, by lowercase name. */
export interface SearchEntry {
  dn: string;
  attributes: Map<string, string[]>;
}

interface Result {
  code: number;
  diagnostic: string;
}

/** An LDAPResult's code and diagnostic message (RFC 4511 section 4.1.9). */
function result(op: Element): Result {
  const [code, , diagnostic] = readElements(op.content);
  if (!code || !diagnostic) throw new LdapError("the directory sent a malformed result");
  return { code: readInteger(code), diagnostic: readText(diagnostic) };
}

/** What the server said, for messages: the code and its text. */
const described = (what: string, answer: Result) =>
  `${what} (result ${answer.code}${answer.diagnostic ? `: ${answer.diagnostic}` : ""})`;

type Socket = ReturnType<typeof import("cloudflare:sockets").connect>;

/** One connection, its reads bounded by the deadline the caller set. */
export class LdapConnection {
  private buffered = new Uint8Array(0);
  private nextId = 1;
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private writer: WritableStreamDefaultWriter<Uint8Array>;

  private constructor(
    private socket: Socket,
    readonly target: string,
    private readonly timedOut: () => boolean,
    private readonly timeoutMs: number,
  ) {
    this.reader = socket.readable.getReader();
    this.writer = socket.writable.getWriter();
  }

  /** Connects within `timeoutMs` (which then bounds everything done on the connection), StartTLS first if asked. */
  static async open(target: LdapTarget, options: { startTls: boolean; timeoutMs: number }): Promise<LdapConnection> {
    const name = `${target.hostname.includes(":") ? `[${target.hostname}]` : target.hostname}:${target.port}`;
    let sockets: typeof import("cloudflare:sockets");
    try {
      sockets = await import("cloudflare:sockets");
    } catch {
      throw new LdapError("LDAP sign-in needs Cloudflare Workers TCP sockets (cloudflare:sockets)");
    }
    let expired = false;
    let socket: Socket;
    try {
      socket = sockets.connect(
        { hostname: target.hostname, port: target.port },
        { secureTransport: target.tls ? "on" : options.startTls ? "starttls" : "off", allowHalfOpen: false },
      );
    } catch (error) {
      throw new LdapError(`the directory ${name} is unreachable: ${errorText(error)}`);
    }
    socket.closed.catch(() => undefined);
    const timer = setTimeout(() => {
      expired = true;
      socket.close().catch(() => undefined);
    }, options.timeoutMs);
    const connection = new LdapConnection(socket, name, () => expired, options.timeoutMs);
    connection.stopTimer = () => clearTimeout(timer);
    try {
      await socket.opened;
    } catch (error) {
      connection.stopTimer();
      throw new LdapError(
        expired
          ? `the directory ${name} did not answer within ${options.timeoutMs / 1000} s`
          : `the directory ${name} is unreachable: ${errorText(error)}`,
      );
    }
    if (options.startTls && !target.tls) await connection.startTls();
    return connection;
  }

  private stopTimer: () => void = () => undefined;

  /** StartTLS: the extended operation, then TLS over the same connection (RFC 4511 section 4.14). */
  private async startTls() {
    const answer = await this.request(startTlsRequest(), Op.EXTENDED_RESPONSE);
    const outcome = result(answer);
    if (outcome.code !== ResultCode.SUCCESS) {
      await this.close();
      throw new LdapError(described(`the directory ${this.target} refused StartTLS`, outcome));
    }
    this.reader.releaseLock();
    this.writer.releaseLock();
    this.socket = this.socket.startTls();
    this.socket.closed.catch(() => undefined);
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
  }

  /** A simple bind: the result as the server sent it (49 is a wrong password). */
  async bind(dn: string, password: string): Promise<Result> {
    return result(await this.request(bindRequest(dn, password), Op.BIND_RESPONSE));
  }

  /** The entries a subtree search finds, and its result (4 when more than two matched). */
  async search(
    base: string,
    filter: string,
    attributes: readonly string[] = [],
  ): Promise<{ entries: SearchEntry[]; result: Result }> {
    const id = this.nextId++;
    const seconds = Math.max(1, Math.ceil(this.timeoutMs / 1000));
    await this.send(message(id, searchRequest(base, filter, seconds, attributes)));
    const entries: SearchEntry[] = [];
    for (;;) {
      const op = await this.receive(id);
      if (op.tag === Op.SEARCH_ENTRY) entries.push(searchEntry(op));
      else if (op.tag === Op.SEARCH_DONE) return { entries, result: result(op) };
      else if (op.tag !== Op.SEARCH_REFERENCE)
        throw new LdapError(`the directory answered a search with operation 0x${op.tag.toString(16)}`);
    }
  }

  /** Unbinds (no answer comes) and closes. Never throws. */
  async close(): Promise<void> {
    this.stopTimer();
    await this.send(message(this.nextId++, unbindRequest())).catch(() => undefined);
    await this.socket.close().catch(() => undefined);
  }

  private async request(op: Uint8Array, answerTag: number): Promise<Element> {
    const id = this.nextId++;
    await this.send(message(id, op));
    const answer = await this.receive(id);
    if (answer.tag !== answerTag)
      throw new LdapError(`the directory answered with operation 0x${answer.tag.toString(16)}`);
    return answer;
  }

  private async send(bytes: Uint8Array) {
    await this.writer.write(bytes).catch((error: unknown) => {
      throw this.lost(error);
    });
  }

  /** The protocol op of the next message for `id`; a notice of disconnection (id 0) ends the exchange. */
  private async receive(id: number): Promise<Element> {
    for (;;) {
      const bytes = await this.readMessage();
      try {
        const envelope = readElement(bytes);
        const [messageId, op] = readElements(envelope.content);
        if (envelope.tag !== 0x30 || !messageId || !op) throw new BerError("not an LDAPMessage");
        const answeredId = readInteger(messageId);
        if (answeredId === 0)
          throw new LdapError(described(`the directory ${this.target} ended the connection`, result(op)));
        if (answeredId === id) return op;
      } catch (error) {
        if (error instanceof BerError) throw new LdapError(`the directory ${this.target} sent a malformed message`);
        throw error;
      }
    }
  }

  private async readMessage(): Promise<Uint8Array> {
    for (;;) {
      let length = -1;
      try {
        length = elementLength(this.buffered);
      } catch {
        throw new LdapError(`the directory ${this.target} sent a malformed message`);
      }
      if (length > MAX_MESSAGE_BYTES) throw new LdapError(`the directory ${this.target} sent a message over 1 MiB`);
      if (length >= 0 && this.buffered.length >= length) {
        const taken = this.buffered.slice(0, length);
        this.buffered = this.buffered.slice(length);
        return taken;
      }
      const chunk = await this.reader.read().catch((error: unknown) => ({ done: true as const, error }));
      if (chunk.done) throw this.lost("error" in chunk ? chunk.error : undefined);
      this.buffered = concatBytes(this.buffered, chunk.value);
    }
  }

  private lost(error: unknown): LdapError {
    if (this.timedOut())
      return new LdapError(`the directory ${this.target} did not answer within ${this.timeoutMs / 1000} s`);
    return new LdapError(`the directory ${this.target} closed the connection${error ? `: ${errorText(error)}` : ""}`);
  }
}

/** A SearchResultEntry: objectName, then a sequence of {type, SET OF value} (RFC 4511 section 4.5.2). */
function searchEntry(op: Element): SearchEntry {
  try {
    const [dn, list] = readElements(op.content);
    if (!dn) throw new LdapError("the directory sent an entry without a DN");
    const attributes = new Map<string, string[]>();
    for (const attribute of list ? readElements(list.content) : []) {
      const [type, values] = readElements(attribute.content);
      if (!type) continue;
      const name = readText(type).toLowerCase();
      attributes.set(name, [
        ...(attributes.get(name) ?? []),
        ...(values ? readElements(values.content).map(readText) : []),
      ]);
    }
    return { dn: readText(dn), attributes };
  } catch (error) {
    if (error instanceof BerError) throw new LdapError("the directory sent a malformed entry");
    throw error;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
