export function sourceHash(root: string, sources: { dirs: string[]; files: string[]; skip: (file: string) => boolean }): string;
