// The offline-download services an admin points the gateway at: aria2 (JSON-RPC over HTTP),
// qBittorrent (its Web API) and Transmission (its RPC over HTTP). Gatehouse checks that they answer
// (AList v3.58.0 server/handles/offline_download.go:22, :54; OpenList's set_transmission), with the
// Worker's fetch and a timeout, and reports why when they do not. Credentials never appear in a
// message.
import { ApiError } from "../../http/errors.ts";
import {
  ARIA2_URI_CREDENTIALS,
  ARIA2_URI_NOT_HTTP,
  aria2Failed,
  aria2WebSocket,
  QBIT_UNAUTHORIZED,
  QBIT_URL_ENCODING,
  QBIT_URL_NOT_HTTP,
  qbitLoginFailed,
  qbitUnreachable,
  TRANSMISSION_UNAUTHORIZED,
  TRANSMISSION_URI_ENCODING,
  TRANSMISSION_URI_NOT_HTTP,
  transmissionFailed,
  transmissionTooOld,
  transmissionUnreachable,
} from "./messages.ts";
import { parseJson } from "./validate.ts";

/** How long one check may wait for the service; AList uses 4 s for aria2's dial and reply. */
const SERVICE_TIMEOUT_MS = 5_000;

/** aria2's RPC endpoint, e.g. `http://localhost:6800/jsonrpc`. Bad input is a 400, before anything is saved. */
export function parseAria2Uri(raw: string): URL {
  const url = parseUrl(raw);
  if (url && (url.protocol === "ws:" || url.protocol === "wss:")) {
    throw new ApiError(
      400,
      aria2WebSocket(`${url.protocol === "wss:" ? "https" : "http"}://${url.host}${url.pathname}`),
    );
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ApiError(400, ARIA2_URI_NOT_HTTP);
  }
  if (url.username || url.password) throw new ApiError(400, ARIA2_URI_CREDENTIALS);
  return url;
}

/** Where qBittorrent's Web API lives, and the credentials to sign in with. */
export interface QbittorrentWebUi {
  /** The URL without credentials, query or fragment, ending in `/`: the API paths join onto it (as AList's do). */
  base: URL;
  username: string;
  password: string;
}

/** qBittorrent's Web UI, e.g. `http://admin:adminadmin@localhost:8080/`: the credentials ride in the URL. */
export function parseQbittorrentUrl(raw: string): QbittorrentWebUi {
  const url = parseUrl(raw);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ApiError(400, QBIT_URL_NOT_HTTP);
  }
  let username: string;
  let password: string;
  try {
    [username, password] = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
  } catch {
    throw new ApiError(400, QBIT_URL_ENCODING);
  }
  const base = new URL(url);
  base.username = "";
  base.password = "";
  base.search = "";
  base.hash = "";
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  return { base, username, password };
}

/** `aria2.getVersion`, authorised with `token:<secret>` when a secret is set. Returns the version. */
export async function aria2Version(uri: URL, secret: string, timeoutMs = SERVICE_TIMEOUT_MS): Promise<string> {
  const failed = (cause: string) => new ApiError(500, aria2Failed(cause));
  let response: Response;
  let text: string;
  try {
    response = await fetch(uri, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "gatehouse",
        method: "aria2.getVersion",
        params: secret ? [`token:${secret}`] : [],
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    throw failed(describeFetchFailure(error, timeoutMs));
  }
  // aria2 answers a refused secret with HTTP 400 and a JSON-RPC error, so read the body whatever the status.
  const reply = parseJson(text) as
    | { result?: { version?: unknown }; error?: { code?: unknown; message?: unknown } }
    | undefined;
  if (typeof reply?.error?.message === "string")
    throw failed(`${reply.error.message.slice(0, 200)} (JSON-RPC error ${String(reply.error.code).slice(0, 20)})`);
  if (typeof reply?.result?.version === "string") return reply.result.version;
  throw failed(`not an aria2 JSON-RPC reply (HTTP ${response.status})`);
}

/**
 * What AList's client does: `app/version` without credentials; if that is refused, sign in with
 * the URL's userinfo (the reply must start `Ok`), keep the session cookie and ask again.
 */
export async function checkQbittorrent(
  { base, username, password }: QbittorrentWebUi,
  timeoutMs = SERVICE_TIMEOUT_MS,
): Promise<void> {
  const post = async (path: string, init: RequestInit = {}) => {
    try {
      const response = await fetch(new URL(path, base), {
        method: "POST",
        ...init,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { response, body: await response.text() };
    } catch (error) {
      throw new ApiError(500, qbitUnreachable(base.href, describeFetchFailure(error, timeoutMs)));
    }
  };

  if ((await post("api/v2/app/version")).response.status === 200) return;

  const login = await post("api/v2/auth/login", { body: new URLSearchParams({ username, password }) });
  if (!login.body.startsWith("Ok")) throw new ApiError(500, qbitLoginFailed(base.href));
  const cookie = login.response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0]!.trim())
    .join("; ");

  if ((await post("api/v2/app/version", { headers: { Cookie: cookie } })).response.status !== 200) {
    throw new ApiError(500, QBIT_UNAUTHORIZED);
  }
}

/** Transmission's RPC endpoint, and the credentials of its HTTP Basic authentication (from the URI's userinfo). */
export interface TransmissionRpc {
  /** The URI without credentials or fragment, e.g. `http://localhost:9091/transmission/rpc`. */
  endpoint: URL;
  /** `Basic …`, or "" when the URI names no user. */
  authorization: string;
}

/** Transmission's RPC URI, e.g. `http://user:pass@localhost:9091/transmission/rpc`; bad input is a 400. */
export function parseTransmissionUri(raw: string): TransmissionRpc {
  const url = parseUrl(raw);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
    throw new ApiError(400, TRANSMISSION_URI_NOT_HTTP);
  let userinfo: string;
  try {
    userinfo = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  } catch {
    throw new ApiError(400, TRANSMISSION_URI_ENCODING);
  }
  const endpoint = new URL(url);
  endpoint.username = "";
  endpoint.password = "";
  endpoint.hash = "";
  const bytes = new TextEncoder().encode(userinfo);
  const authorization = url.username === "" ? "" : `Basic ${btoa(String.fromCharCode(...bytes))}`;
  return { endpoint, authorization };
}

/** The oldest RPC version whose `torrent-add`, `torrent-get` and `session-get` fields the client reads (Transmission 2.40). */
const TRANSMISSION_MIN_RPC_VERSION = 14;

/** A torrent as Transmission reports it (`torrent-get`'s fields the client asks for). */
export interface TransmissionTorrent {
  id: number;
  name: string;
  hashString: string;
  /** 0 to 1. */
  percentDone: number;
  /** 0 stopped, 1-2 checking, 3-4 downloading, 5-6 seeding. */
  status: number;
  errorString: string;
}

/**
 * Transmission's RPC: a JSON request `{method, arguments}` answered `{result, arguments}`, `result`
 * "success" or the reason. The first call of a session answers 409 with the session id in
 * `X-Transmission-Session-Id` (its CSRF guard); the call is sent again with it, and the id is kept
 * for the client's later calls (a restarted daemon answers 409 again, and the dance repeats).
 */
export class TransmissionClient {
  private sessionId = "";

  constructor(
    private readonly rpc: TransmissionRpc,
    private readonly timeoutMs = SERVICE_TIMEOUT_MS,
  ) {}

  async call<T>(method: string, args: object = {}): Promise<T> {
    const where = this.rpc.endpoint.href;
    const send = async () => {
      try {
        return await fetch(this.rpc.endpoint, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            ...(this.sessionId ? { "X-Transmission-Session-Id": this.sessionId } : {}),
            ...(this.rpc.authorization ? { Authorization: this.rpc.authorization } : {}),
          },
          body: JSON.stringify({ method, arguments: args }),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (error) {
        throw new ApiError(500, transmissionUnreachable(where, describeFetchFailure(error, this.timeoutMs)));
      }
    };
    let response = await send();
    const offered = response.headers.get("X-Transmission-Session-Id");
    if (response.status === 409 && offered) {
      await response.body?.cancel();
      this.sessionId = offered;
      response = await send();
    }
    if (response.status === 401) {
      await response.body?.cancel();
      throw new ApiError(500, TRANSMISSION_UNAUTHORIZED);
    }
    const reply = parseJson(await response.text()) as { result?: unknown; arguments?: unknown } | undefined;
    if (typeof reply?.result !== "string")
      throw new ApiError(500, transmissionFailed(`not a Transmission RPC reply (HTTP ${response.status})`));
    if (reply.result !== "success") throw new ApiError(500, transmissionFailed(reply.result.slice(0, 200)));
    return (reply.arguments ?? {}) as T;
  }

  /** `session-get`: the daemon's version, refused when its RPC is older than the client reads. */
  async version(): Promise<string> {
    const session = await this.call<{ version?: unknown; "rpc-version"?: unknown }>("session-get", {
      fields: ["version", "rpc-version"],
    });
    const rpcVersion = typeof session["rpc-version"] === "number" ? session["rpc-version"] : 0;
    if (rpcVersion < TRANSMISSION_MIN_RPC_VERSION)
      throw new ApiError(500, transmissionTooOld(rpcVersion, TRANSMISSION_MIN_RPC_VERSION));
    return typeof session.version === "string" ? session.version : "";
  }

  /** `torrent-add` of a magnet link or a .torrent URL (the daemon fetches it); an existing torrent is answered as it is. */
  async add(url: string, downloadDir?: string): Promise<{ id: number; name: string; hashString: string }> {
    const added = await this.call<Record<string, { id: number; name: string; hashString: string } | undefined>>(
      "torrent-add",
      { filename: url, ...(downloadDir ? { "download-dir": downloadDir } : {}) },
    );
    const torrent = added["torrent-added"] ?? added["torrent-duplicate"];
    if (!torrent) throw new ApiError(500, transmissionFailed("torrent-add answered no torrent"));
    return torrent;
  }

  /** `torrent-get` of one torrent: its progress, or undefined when the daemon no longer has it. */
  async progress(id: number): Promise<TransmissionTorrent | undefined> {
    const { torrents } = await this.call<{ torrents: TransmissionTorrent[] }>("torrent-get", {
      ids: [id],
      fields: ["id", "name", "hashString", "percentDone", "status", "errorString"],
    });
    return torrents[0];
  }

  /** `torrent-remove`, the downloaded data kept or deleted. */
  async remove(id: number, deleteData: boolean): Promise<void> {
    await this.call("torrent-remove", { ids: [id], "delete-local-data": deleteData });
  }
}

/** Why a fetch failed, in words: a timeout, or the runtime's message with its cause (Node puts ECONNREFUSED there). */
function describeFetchFailure(error: unknown, timeoutMs: number): string {
  if ((error as { name?: unknown } | null)?.name === "TimeoutError") return `no answer within ${timeoutMs / 1000} s`;
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : "";
  return cause && cause !== error.message ? `${error.message}: ${cause}` : error.message;
}

function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw.trim());
  } catch {
    return null;
  }
}
