import type { AgentDetail } from '../api/types';

/** What every tab of the agent page receives. */
export interface TabProps {
  agent: AgentDetail;
  /** Reloads the agent (status, system data) after an action changed it. */
  reload: () => void;
}
