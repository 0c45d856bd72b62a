// The call-status service's migrations, recorded in their own table (callstatus_migration) so the
// service may share a PostgreSQL database with the RMM server. Append only.
import type { MigrationFactory } from '../context.js';
import base from './0001_callstatus.js';

export const callstatusMigrations: ReadonlyArray<readonly [name: string, factory: MigrationFactory]> = [['0001_callstatus', base]];
