// Plays back a device shell's recording (asciicast v2, GET /device-sessions/{id}/recording, admins
// only) in the page with asciinema-player, and offers the file itself. The player's terminal emulator
// is WebAssembly, which the console's page is allowed to compile (security-headers.ts); its styles are
// a stylesheet of its own plus CSSOM changes, which the CSP allows. Loaded only when a recording is
// opened, so the agent page does not carry it.
import { create, type Player } from 'asciinema-player';
import 'asciinema-player/dist/bundle/asciinema-player.css';
import { useEffect, useRef, useState } from 'react';
import { apiText, saveFile } from '../../api/client';
import { ErrorBanner, Loading } from '../../ui/widgets';
import './recordings.css';

export function RecordingPlayer({ sessionId, onClose }: { sessionId: string; onClose: () => void }) {
  const host = useRef<HTMLDivElement>(null);
  const [cast, setCast] = useState<string>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    const controller = new AbortController();
    setCast(undefined);
    setError(undefined);
    apiText(`/device-sessions/${encodeURIComponent(sessionId)}/recording`, { signal: controller.signal })
      .then(setCast)
      .catch((err: unknown) => {
        if (!controller.signal.aborted) setError(err);
      });
    return () => controller.abort();
  }, [sessionId]);

  useEffect(() => {
    const element = host.current;
    if (!cast || !element) return;
    let player: Player | undefined;
    try {
      // Long pauses (the technician reading) are cut to 2 s; the recording keeps their real length.
      player = create({ data: cast }, element, { fit: 'width', autoPlay: true, idleTimeLimit: 2, terminalFontSize: 'small' });
    } catch (err) {
      setError(err);
    }
    return () => player?.dispose();
  }, [cast]);

  return (
    <section className="card recording-player" aria-label="Recording">
      <div className="row">
        <h3>Session {sessionId}</h3>
        <button type="button" disabled={!cast} onClick={() => cast && saveFile(`session-${sessionId}.cast`, cast, 'application/x-asciicast')}>
          Download recording
        </button>
        <button type="button" onClick={onClose}>
          Close player
        </button>
      </div>
      <ErrorBanner error={error} />
      {!cast && !error && <Loading />}
      <div ref={host} className="recording-host" data-testid="recording-player" />
    </section>
  );
}
