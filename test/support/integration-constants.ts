/** Shared by the Node-side global setup and the tests inside workerd (which cannot import Node modules). */
export const INTEGRATION_ADMIN_PASSWORD = "integration admin password";
