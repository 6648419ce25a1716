// The callback's answer to the browser (docs/decisions.md D20.1). The popup's page posts the
// result to the window that opened it, on this site's own origin only (OpenList posts to "*", so
// any page that opened the popup would receive the token); with no opener left (a provider whose
// pages cut it), or in sso_compatibility_mode, the browser goes to the UI's page with the result in
// its query, which the UI reads (`/@login?token=`, `/@manage?sso_id=`).
import type { CallbackResult } from "./rules.ts";

/** Constant, so the page's policy allows exactly this script by its hash and nothing else. */
const SCRIPT =
  'var d=JSON.parse(document.getElementById("sso").textContent);' +
  "if(window.opener){window.opener.postMessage(d.message,location.origin);window.close()}" +
  "else location.replace(d.fallback)";

let scriptHash: Promise<string> | undefined;

function hashOfScript(): Promise<string> {
  scriptHash ??= crypto.subtle
    .digest("SHA-256", new TextEncoder().encode(SCRIPT))
    .then((digest) => btoa(String.fromCharCode(...new Uint8Array(digest))));
  return scriptHash;
}

/** The UI's page that takes the result from its query. */
export function fallbackUrl(result: CallbackResult): string {
  return result.method === "sso_get_token"
    ? `/@login?token=${encodeURIComponent(result.token)}`
    : `/@manage?sso_id=${encodeURIComponent(result.ssoId)}`;
}

/** JSON inside HTML: nothing in it can close the element. */
const inHtml = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");

export async function callbackPage(result: CallbackResult): Promise<Response> {
  const message = result.method === "sso_get_token" ? { token: result.token } : { sso_id: result.ssoId };
  const data = inHtml({ message, fallback: fallbackUrl(result) });
  const html = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing in</title></head><body>
<script type="application/json" id="sso">${data}</script>
<script>${SCRIPT}</script>
<noscript>Single sign-on needs JavaScript.</noscript>
</body></html>
`;
  return new Response(html, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      // The token is in the page: never stored, never sent on as a referrer.
      "Cache-Control": "no-store",
      "Content-Security-Policy": `default-src 'none'; script-src 'sha256-${await hashOfScript()}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    },
  });
}
