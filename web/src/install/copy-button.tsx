// Copies a text to the clipboard; says so when the browser refuses (no secure context), so the text
// beside it can be selected by hand.
import { useState } from 'react';

export function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<'copied' | 'refused'>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('refused');
    }
  };
  return (
    <button type="button" onClick={() => void copy()} title={state === 'refused' ? 'The browser refused the clipboard here: select the text and copy it' : undefined}>
      {state === 'copied' ? 'Copied' : state === 'refused' ? 'Select and copy' : 'Copy'}
    </button>
  );
}
