// The test directory's entries (ldap-server.ts loads them into slapd), apart from the server so the
// tests inside workerd can import them without Node's modules.

/** What the tests configure Gatehouse with and sign in as. */
export const LDAP_DIRECTORY = {
  suffix: "dc=gatehouse,dc=test",
  peopleBase: "ou=people,dc=gatehouse,dc=test",
  managerDn: "cn=manager,dc=gatehouse,dc=test",
  managerPassword: "manager-secret",
  /** Directory users: uid → password. `admin` shares its name with Gatehouse's admin account. */
  users: { alice: "alice-secret", bob: "bob-secret", admin: "directory-admin-secret", carol: "carol-secret" },
} as const;
