// The agent page's History tab: this agent's commands and scripts, with the fleet-wide list's rows.
import type { TabProps } from '../agent-detail/tab-props';
import { HistoryList } from './history-list';

export function AgentHistoryTab({ agent }: TabProps) {
  return <HistoryList path={`/agents/${encodeURIComponent(agent.id)}/history`} showAgent={false} />;
}
