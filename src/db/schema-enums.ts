// Value sets used by columns of several schema files. Their own file so that schema-sso.ts and
// schema-workflows.ts need not import schema.ts, which imports them (an import circle).

/** users.role, and the role an SSO mapping grants. */
export type UserRole = 'read' | 'write' | 'admin';

/** agents.platform, and the platforms a saved script runs on. */
export type Platform = 'freebsd' | 'linux' | 'windows';
