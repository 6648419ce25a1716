// globalSetup of the workerd project: the directory LDAP sign-in talks to (ldap-server.ts), its URL
// handed to the tests inside workerd through vitest's provide/inject.
import type { TestProject } from "vitest/node";
import { startDirectory } from "./ldap-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** `ldap://127.0.0.1:<port>`: slapd with LDAP_DIRECTORY's entries. */
    ldapUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const directory = await startDirectory();
  project.provide("ldapUrl", directory.url);
  return () => directory.stop();
}
