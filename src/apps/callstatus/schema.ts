// Row types of the call-status service's tables, as Kysely sees them. Keep in step with
// migrations/callstatus/.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface CallstatusUsersTable {
  id: Generated<number>;
  directory_id: Generated<string>;
  display_name: string;
  extension: Generated<string>;
  personal_nr: Generated<string>;
  active: Generated<boolean>;
}

export interface CallstatusDevicesTable {
  id: Generated<number>;
  name: string;
  hostname: string;
}

export interface CallstatusAssignmentsTable {
  id: Generated<number>;
  user_id: number;
  device_id: number;
  segment: number;
}

export interface CallstatusStateTable {
  user_id: number;
  attendance: Generated<string>;
  collaboration_status: Generated<string>;
  phone_active: Generated<number>;
  updated_at: Timestamp;
}

export interface CallstatusColorsTable {
  id: Generated<number>;
  status_key: string;
  r: number;
  g: number;
  b: number;
  effect: Generated<string>;
}

export interface CallstatusActivityTable {
  id: Generated<number>;
  time: Timestamp;
  user_id: number | null;
  user_name: string;
  attendance: string;
  new_status: string;
  action: string;
  request: string;
  result: string;
}

export interface CallstatusDatabase {
  callstatus_users: CallstatusUsersTable;
  callstatus_devices: CallstatusDevicesTable;
  callstatus_assignments: CallstatusAssignmentsTable;
  callstatus_state: CallstatusStateTable;
  callstatus_colors: CallstatusColorsTable;
  callstatus_activity: CallstatusActivityTable;
}
