// A real OpenID provider for the single sign-on tests: oauth2-mock-server on 127.0.0.1 (discovery,
// authorization with PKCE, token and JWKS endpoints; it approves every authorization at once). A
// test shapes the ID token it will get through extra query parameters on the authorization URL it
// follows, remembered per authorization code:
//   test_claims=<JSON>   merged into the ID token's claims (sub, name, aud, nonce, exp ...)
//   test_key=foreign     the ID token signed by a key the provider does not publish, under its key id
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair } from "jose";
import { OAuth2Server } from "oauth2-mock-server";

export interface OidcProvider {
  /** The issuer, also sso_endpoint_name: discovery is at <issuer>/.well-known/openid-configuration. */
  issuer: string;
  close(): Promise<void>;
}

/** A claim that never leaves the provider: it marks a token to sign with the foreign key. */
const FOREIGN_MARK = "test_foreign_key";

interface Shaping {
  claims: Record<string, unknown>;
  foreignKey: boolean;
}

/** `claims`: in every ID token, before a test's own (the browser test cannot add parameters). */
export async function startOidcProvider(claims: Record<string, unknown> = {}): Promise<OidcProvider> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  const foreign = await generateKeyPair("RS256");
  const shapings = new Map<string, Shaping>();

  server.service.on("beforeAuthorizeRedirect", (redirect: { url: URL }, req: { url?: string }) => {
    const query = new URL(req.url ?? "/", "http://provider").searchParams;
    const code = redirect.url.searchParams.get("code");
    if (code === null) return;
    shapings.set(code, {
      claims: JSON.parse(query.get("test_claims") ?? "{}") as Record<string, unknown>,
      foreignKey: query.get("test_key") === "foreign",
    });
  });
  server.service.on(
    "beforeTokenSigning",
    (token: { payload: Record<string, unknown> }, req: { body?: Record<string, unknown> }) => {
      const code = req.body?.code;
      const shaping = typeof code === "string" ? shapings.get(code) : undefined;
      Object.assign(token.payload, claims);
      if (!shaping) return;
      Object.assign(token.payload, shaping.claims);
      if (shaping.foreignKey) token.payload[FOREIGN_MARK] = true;
    },
  );
  // The event cannot change the signing key, so the token it marked is signed again here.
  const buildToken = server.issuer.buildToken.bind(server.issuer);
  server.issuer.buildToken = async (options) => {
    const jwt = await buildToken(options);
    const { [FOREIGN_MARK]: marked, ...claims } = decodeJwt(jwt);
    if (!marked) return jwt;
    const header = decodeProtectedHeader(jwt);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: header.kid })
      .sign(foreign.privateKey);
  };
  await server.start(0, "127.0.0.1");
  server.issuer.url = `http://127.0.0.1:${server.address().port}`;
  return { issuer: server.issuer.url, close: () => server.stop() };
}
