// Hrana-over-HTTP streams and their batons, for the local libSQL endpoint (development tooling).
//
// A stream is a database connection plus the SQL texts stored on it. HTTP is stateless, so each
// pipeline response carries a baton that the next request on the stream must present; a request
// without a baton opens a new stream. Batons are single-use: this forces a client to wait for
// one response before its next request on the stream, and a stale baton fails loudly.

import { randomBytes } from "node:crypto";

import type { Connection, ConnectionPool } from "./database.ts";
import { RequestError } from "./hrana.ts";

/** The baton leads to no usable stream; the HTTP request fails with status 400. */
export class BatonError extends Error {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

export class Stream {
  /** SQL texts stored with `store_sql`; over HTTP their scope is the stream. */
  readonly sqls = new Map<number, string>();
  /** Secret part of the baton that the next request must show; unset while a request runs. */
  secret: string | undefined;
  expiryTimer: NodeJS.Timeout | undefined;
  readonly id: number;
  readonly #pool: ConnectionPool;
  #connection: Connection | undefined;

  constructor(id: number, pool: ConnectionPool) {
    this.id = id;
    this.#pool = pool;
    this.#connection = pool.take();
  }

  get isClosed(): boolean {
    return this.#connection === undefined;
  }

  get connection(): Connection {
    if (this.#connection === undefined) throw new RequestError("The stream is closed", "STREAM_CLOSED");
    if (this.#connection.isTainted && this.#connection.isAutocommit) {
      this.#connection.close();
      this.#connection = this.#pool.take();
    }
    return this.#connection;
  }

  /** Hands the connection back to the pool; one left in a transaction is closed, which rolls it back. */
  close(): void {
    if (this.#connection) this.#pool.give(this.#connection);
    this.#connection = undefined;
  }
}

export class StreamRegistry {
  readonly #streams = new Map<number, Stream>();
  readonly #pool: ConnectionPool;
  readonly #idleTimeoutMs: number;
  readonly #log: (line: string) => void;
  #lastId = 0;

  constructor(pool: ConnectionPool, idleTimeoutMs: number, log: (line: string) => void) {
    this.#pool = pool;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#log = log;
  }

  /** Opens a stream when there is no baton, else takes the stream the baton refers to. */
  acquire(baton: string | undefined): Stream {
    if (baton === undefined) {
      const stream = new Stream(++this.#lastId, this.#pool);
      this.#streams.set(stream.id, stream);
      return stream;
    }
    const match = /^(\d+)\.([\w-]+)$/.exec(baton);
    if (match === null) throw new BatonError("The baton is malformed", "BATON_INVALID");
    const stream = this.#streams.get(Number(match[1]));
    if (stream === undefined) {
      throw new BatonError(
        `Stream ${match[1]} is not open: it was closed, it expired after ${this.#idleTimeoutMs / 1000} s ` +
          "without requests (rolling back its transaction), or the server was restarted",
        "STREAM_EXPIRED",
      );
    }
    if (stream.secret !== match[2]) {
      throw new BatonError(
        "The baton was already used: a request on a stream must wait for the response to the previous one",
        "BATON_REUSED",
      );
    }
    stream.secret = undefined;
    clearTimeout(stream.expiryTimer);
    return stream;
  }

  /** Ends a request on the stream: returns the baton for the next one, or null if it closed. */
  release(stream: Stream): string | null {
    if (stream.isClosed) {
      this.#streams.delete(stream.id);
      return null;
    }
    stream.secret = randomBytes(16).toString("base64url");
    stream.expiryTimer = setTimeout(() => this.#expire(stream), this.#idleTimeoutMs).unref();
    return `${stream.id}.${stream.secret}`;
  }

  closeAll(): void {
    for (const stream of this.#streams.values()) {
      clearTimeout(stream.expiryTimer);
      stream.close();
    }
    this.#streams.clear();
    this.#pool.close();
  }

  #expire(stream: Stream): void {
    const inTransaction = !stream.connection.isAutocommit;
    this.#streams.delete(stream.id);
    stream.close();
    this.#log(
      `stream ${stream.id} expired after ${this.#idleTimeoutMs / 1000} s without requests` +
        (inTransaction ? "; its open transaction was rolled back" : ""),
    );
  }
}
