// The controls of a live desktop: full screen (the Fullscreen API on the screen's container, so the
// desktop scales to the whole display), Ctrl+Alt+Del (which the browser would never pass on), view
// only, the picture's quality, and Disconnect.
import type RFB from '@novnc/novnc';
import { useEffect, useState, type RefObject } from 'react';
import { QUALITIES, type QualityName } from './quality';

export function DesktopToolbar({
  rfb,
  container,
  forcedViewOnly,
  viewOnly,
  quality,
  onViewOnly,
  onQuality,
  onDisconnect,
}: {
  rfb: RFB | null;
  container: RefObject<HTMLDivElement | null>;
  /** Opened view-only: the server forwards no input, so the box stays ticked. */
  forcedViewOnly: boolean;
  viewOnly: boolean;
  quality: QualityName;
  onViewOnly: (on: boolean) => void;
  onQuality: (name: QualityName) => void;
  onDisconnect: () => void;
}) {
  const [fullscreen, setFullscreen] = useState(false);
  useEffect(() => {
    const follow = () => setFullscreen(document.fullscreenElement === container.current);
    document.addEventListener('fullscreenchange', follow);
    return () => document.removeEventListener('fullscreenchange', follow);
  }, [container]);

  const toggleFullscreen = () => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void container.current?.requestFullscreen().then(() => rfb?.focus());
  };

  return (
    <div className="row desktop-toolbar" role="toolbar" aria-label="Remote desktop controls">
      <button type="button" onClick={toggleFullscreen} disabled={!document.fullscreenEnabled}>
        {fullscreen ? 'Leave full screen' : 'Full screen'}
      </button>
      <button type="button" onClick={() => rfb?.sendCtrlAltDel()} disabled={!rfb || viewOnly}>
        Ctrl+Alt+Del
      </button>
      <label className="inline">
        <input type="checkbox" checked={viewOnly} disabled={forcedViewOnly} onChange={(e) => onViewOnly(e.target.checked)} /> View only
      </label>
      <label className="inline">
        Picture
        <select value={quality} onChange={(e) => onQuality(e.target.value as QualityName)}>
          {Object.entries(QUALITIES).map(([name, q]) => (
            <option key={name} value={name}>
              {q.label}
            </option>
          ))}
        </select>
      </label>
      <span className="spacer" />
      <button type="button" onClick={onDisconnect}>
        Disconnect
      </button>
    </div>
  );
}
