// A search field whose text goes into the URL (`q`) after a short pause, not on every key: the list
// reloads once per search, and a reload or a shared link keeps it.
import { useEffect, useState } from 'react';
import { setQuery } from '../router';

const SEARCH_DELAY_MS = 300;

export function SearchBox({ value, label, placeholder }: { value: string; label: string; placeholder: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text.trim() === value) return;
    const timer = setTimeout(() => setQuery({ q: text.trim() || undefined }), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, value]);
  return (
    <label className="search-box">
      {label}
      <input type="search" placeholder={placeholder} value={text} onChange={(e) => setText(e.target.value)} maxLength={255} />
    </label>
  );
}
