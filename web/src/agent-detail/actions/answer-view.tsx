// An agent's answer to a command, readable: plain fields as "key: value" lines, a list of updates as a
// table, a command's output in a <pre> (ui/result-view.tsx). The answer is the agent's (untrusted) and
// is only ever text here.
import { ResultView } from '../../ui/result-view';

export function AnswerView({ answer }: { answer: unknown }) {
  return <ResultView result={answer} />;
}
