// The ordered list of migrations. Append only: a landed migration is never edited or reordered.
import type { MigrationFactory } from './context.js';
import settings from './0001_settings.js';
import identity from './0002_identity.js';
import agents from './0003_agents.js';
import metrics from './0004_metrics.js';
import configBackups from './0005_config_backups.js';
import firmware from './0006_firmware.js';
import tasks from './0007_tasks.js';
import wau from './0008_wau.js';
import attentionFacts from './0009_attention_facts.js';
import agentListOrder from './0010_agent_list_order.js';
import updateChannel from './0011_update_channel.js';
import customerInstallerKeys from './0012_customer_installer_keys.js';
import alerting from './0013_alerting.js';
import cluster from './0014_cluster.js';
import sharedBlobs from './0015_shared_blobs.js';
import keyLimits from './0016_key_limits.js';
import agentTagsNotes from './0017_agent_tags_notes.js';
import scriptsHistory from './0018_scripts_history.js';
import bulkActions from './0019_bulk_actions.js';
import consoleDefects from './0020_console_defects.js';
import taskTargets from './0021_task_targets.js';
import userRolesSessions from './0022_user_roles_sessions.js';
import passkeys from './0023_passkeys.js';
import sso from './0024_sso.js';
import agentSortIndexes from './0025_agent_sort_indexes.js';
import pendingAgentIndex from './0026_pending_agent_index.js';
import dropDuplicatePendingIndex from './0027_drop_duplicate_pending_index.js';
import loginThrottle from './0028_login_throttle.js';
import taskAgentWait from './0029_task_agent_wait.js';
import deviceSessions from './0030_device_sessions.js';
import agentRemoteAccess from './0031_agent_remote_access.js';
import checks from './0032_checks.js';
import checkStateRules from './0033_check_state_rules.js';
import checkHistoryTime from './0034_check_history_time.js';
import systemParts from './0035_system_parts.js';

export type { MigrationContext, MigrationFactory } from './context.js';

export const migrations: ReadonlyArray<readonly [name: string, factory: MigrationFactory]> = [
  ['0001_settings', settings],
  ['0002_identity', identity],
  ['0003_agents', agents],
  ['0004_metrics', metrics],
  ['0005_config_backups', configBackups],
  ['0006_firmware', firmware],
  ['0007_tasks', tasks],
  ['0008_wau', wau],
  ['0009_attention_facts', attentionFacts],
  ['0010_agent_list_order', agentListOrder],
  ['0011_update_channel', updateChannel],
  ['0012_customer_installer_keys', customerInstallerKeys],
  ['0013_alerting', alerting],
  ['0014_cluster', cluster],
  ['0015_shared_blobs', sharedBlobs],
  ['0016_key_limits', keyLimits],
  ['0017_agent_tags_notes', agentTagsNotes],
  ['0018_scripts_history', scriptsHistory],
  ['0019_bulk_actions', bulkActions],
  ['0020_console_defects', consoleDefects],
  ['0021_task_targets', taskTargets],
  ['0022_user_roles_sessions', userRolesSessions],
  ['0023_passkeys', passkeys],
  ['0024_sso', sso],
  ['0025_agent_sort_indexes', agentSortIndexes],
  ['0026_pending_agent_index', pendingAgentIndex],
  ['0027_drop_duplicate_pending_index', dropDuplicatePendingIndex],
  ['0028_login_throttle', loginThrottle],
  ['0029_task_agent_wait', taskAgentWait],
  ['0030_device_sessions', deviceSessions],
  ['0031_agent_remote_access', agentRemoteAccess],
  ['0032_checks', checks],
  ['0033_check_state_rules', checkStateRules],
  ['0034_check_history_time', checkHistoryTime],
  ['0035_system_parts', systemParts],
];
