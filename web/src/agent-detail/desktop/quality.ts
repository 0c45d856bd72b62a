// The picture choices offered for a desktop: noVNC's JPEG quality (0–9, Tight encoding) and zlib
// compression (0–9). Balanced is noVNC's own default; the others trade bandwidth against sharpness.
export const QUALITIES = {
  balanced: { label: 'Balanced', quality: 6, compression: 2 },
  sharp: { label: 'Sharp (fast network)', quality: 9, compression: 0 },
  light: { label: 'Light (slow network)', quality: 2, compression: 9 },
} as const;

export type QualityName = keyof typeof QUALITIES;
