// Names in natural order wherever the console sorts agents itself (demo-2 before demo-10, case ignored),
// as the server orders its lists (issue 33).
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export const compareNatural = (a: string, b: string): number => collator.compare(a, b);

export const byNaturalName = (a: { name: string }, b: { name: string }): number => collator.compare(a.name, b.name);
