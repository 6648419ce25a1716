// globalSetup of the workerd project: the OpenID provider single sign-on's tests sign in at
// (oidc-provider.ts), its issuer handed to the tests inside workerd through provide/inject.
import type { TestProject } from "vitest/node";
import { startOidcProvider } from "./oidc-provider.ts";

declare module "vitest" {
  export interface ProvidedContext {
    oidcIssuer: string;
  }
}

export default async function setup(project: TestProject) {
  const provider = await startOidcProvider();
  project.provide("oidcIssuer", provider.issuer);
  return () => provider.close();
}
