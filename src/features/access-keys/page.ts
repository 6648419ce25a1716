// The access keys page (docs/decisions.md D16.7): the OpenList web UI has no page for keys, so this
// small one is served at a path of its own. Plain HTML and one script, no framework and nothing
// fetched from elsewhere; it signs in with the token the web UI keeps (localStorage `token`) and
// calls /api/me/access_key/*. Every value from the server is set as text, never as HTML.

export const KEYS_PAGE_PATH = "/@keys";

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Access keys</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; }
form { display: grid; grid-template-columns: 9rem 1fr; gap: .5rem 1rem; align-items: center; max-width: 36rem; }
fieldset { border: 0; padding: 0; margin: 0; }
table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; font-size: .9rem; }
#made { background: #f3f8f3; border: 1px solid #9c9; padding: .8rem; margin: 1rem 0; }
#made code { word-break: break-all; }
#error { color: #b00; }
[hidden] { display: none !important; }
</style>
</head>
<body>
<h1>Access keys</h1>
<p id="signed-out" hidden>Sign in to the <a href="/@login?redirect=%2F%40keys">web UI</a> first, then come back to this page.</p>
<main id="keys" hidden>
<p>A key is a password for scripts (the API), WebDAV clients and S3 tools. It reaches one folder with the rights you choose, never more than your account may do, and works until it expires or you revoke it.</p>
<form id="create">
<label for="name">Name</label><input id="name" name="name" required maxlength="100" placeholder="backup script">
<label for="path">Folder</label><input id="path" name="path" value="/" required>
<label for="rights">Rights</label>
<select id="rights" name="rights"><option value="read">read only</option><option value="write">read and write</option></select>
<label for="expires">Expires</label><input id="expires" name="expires" type="date">
<span>Used for</span>
<fieldset id="usage">
<label><input type="checkbox" name="usage" value="api" checked> API</label>
<label><input type="checkbox" name="usage" value="webdav" checked> WebDAV</label>
<label><input type="checkbox" name="usage" value="s3"> S3</label>
</fieldset>
<span></span><button type="submit">Create key</button>
</form>
<p id="error" role="alert"></p>
<section id="made" hidden>
<p>Your new key. Copy it now: it is shown only once.</p>
<p>Secret: <code id="secret"></code> <button type="button" id="copy">Copy</button></p>
<p id="s3" hidden>S3 access key id: <code id="access-key-id"></code><br>S3 secret: <code id="secret-access-key"></code></p>
</section>
<table>
<thead><tr><th>Name</th><th>Folder</th><th>Rights</th><th>Used for</th><th>Expires</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody id="list"></tbody>
</table>
</main>
<script>
"use strict";
// Read only: WebDAV read (the API reads with no bit); read and write adds write, rename, move, copy,
// remove and WebDAV manage (docs/api.md, Access keys).
const RIGHTS = { read: undefined, write: 8 | 16 | 32 | 64 | 128 | 256 | 512 };
const token = localStorage.getItem("token");
const $ = (id) => document.getElementById(id);
async function call(path, body) {
  const reply = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? { Authorization: token } : { Authorization: token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const envelope = await reply.json();
  if (envelope.code === 401) showSignedOut();
  if (envelope.code !== 200) throw new Error(envelope.message);
  return envelope.data;
}
function showSignedOut() { $("keys").hidden = true; $("signed-out").hidden = false; }
const when = (text) => (text ? new Date(text).toLocaleString() : "never");
function rightsOf(permission) {
  if (permission === -1) return "all of yours";
  return (permission & (8 | 512)) !== 0 ? "read and write" : "read only";
}
function cell(row, text) { const td = document.createElement("td"); td.textContent = text; row.append(td); return td; }
async function refresh() {
  const keys = await call("/api/me/access_key/list");
  const list = $("list");
  list.replaceChildren();
  for (const key of keys) {
    const row = document.createElement("tr");
    cell(row, key.name);
    cell(row, key.path);
    cell(row, rightsOf(key.permission));
    cell(row, key.usage.join(", "));
    cell(row, key.expires_at === 0 ? "never" : new Date(key.expires_at * 1000).toLocaleString());
    cell(row, when(key.created));
    cell(row, when(key.last_used));
    const revoke = document.createElement("button");
    revoke.type = "button";
    revoke.textContent = "Revoke";
    revoke.setAttribute("aria-label", "Revoke " + key.name);
    revoke.addEventListener("click", () => guarded(async () => { await call("/api/me/access_key/delete", { id: key.id }); await refresh(); }));
    cell(row, "").append(revoke);
    list.append(row);
  }
}
async function guarded(work) {
  $("error").textContent = "";
  try { await work(); } catch (error) { $("error").textContent = error.message; }
}
$("create").addEventListener("submit", (event) => {
  event.preventDefault();
  guarded(async () => {
    const form = new FormData($("create"));
    const expires = form.get("expires");
    const made = await call("/api/me/access_key/create", {
      name: form.get("name"),
      path: form.get("path"),
      permission: RIGHTS[form.get("rights")],
      expires_at: expires ? Math.floor(new Date(expires + "T23:59:59").getTime() / 1000) : 0,
      usage: form.getAll("usage"),
    });
    $("secret").textContent = made.secret;
    $("s3").hidden = made.access_key_id === null;
    $("access-key-id").textContent = made.access_key_id || "";
    $("secret-access-key").textContent = made.secret_access_key || "";
    $("copy").textContent = "Copy";
    $("copy").disabled = false;
    $("made").hidden = false;
    $("create").reset();
    await refresh();
  });
});
$("copy").addEventListener("click", () => guarded(async () => {
  await navigator.clipboard.writeText($("secret").textContent);
  $("copy").textContent = "Copied";
}));
if (!token) showSignedOut();
else { $("keys").hidden = false; guarded(refresh); }
</script>
</body>
</html>
`;

/** The page, for GET and HEAD; anything else is no page here. */
export function keysPage(method: string): Response | undefined {
  if (method !== "GET" && method !== "HEAD") return undefined;
  return new Response(method === "HEAD" ? null : HTML, {
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" },
  });
}
