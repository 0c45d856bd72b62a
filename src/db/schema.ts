// Row types of every table, as Kysely sees them. Keep in step with migrations/.
import type { ColumnType } from 'kysely';

export interface SettingsTable {
  key: string;
  value: string;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface Database {
  settings: SettingsTable;
}
