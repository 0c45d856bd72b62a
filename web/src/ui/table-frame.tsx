// The frame a wide table scrolls in (rather than the page): while the table is wider than the frame,
// the frame is a named region in the tab order, so a keyboard user can reach it and scroll it with the
// arrow keys (WCAG 2.1.1; axe's scrollable-region-focusable). While the table fits, the frame is a plain
// box and adds no tab stop.
import { useEffect, useRef, useState, type ReactNode } from 'react';

export function TableFrame({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const frame = ref.current;
    if (!frame) return;
    const measure = () => setScrolls(frame.scrollWidth > frame.clientWidth + 1);
    measure();
    // The frame narrows with the window; the table widens with its rows.
    const observer = new ResizeObserver(measure);
    observer.observe(frame);
    if (frame.firstElementChild) observer.observe(frame.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={ref} className="table-wrap" {...(scrolls ? { tabIndex: 0, role: 'region', 'aria-label': `${label} (scrolls sideways)` } : {})}>
      {children}
    </div>
  );
}
