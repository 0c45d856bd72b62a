// xterm.js styles the terminal in two ways the console's CSP (`style-src 'self'`, no 'unsafe-inline')
// refuses: `<style>` elements for its rules, and `setAttribute('style', …)` for true-colour cells.
// - The server answers the page with a fresh style nonce (CSP and `<meta name="csp-nonce">`); every
//   `<style>` created from here on carries it, set at creation since a nonce added after insertion
//   does not count.
// - Style attributes set by script go through the CSSOM (`element.style`), which the CSP does not
//   govern and React uses anyway.
// Markup stays as restricted as before: a `<style>` or style attribute that arrives as HTML is still
// refused, and only the console's own scripts (script-src 'self') run. Relaxing the policy with
// 'unsafe-inline' would have applied to every page instead.

let installed = false;

export function letTerminalStylesThroughCsp(): void {
  if (installed) return;
  installed = true;
  const nonce = document.querySelector('meta[name="csp-nonce"]')?.getAttribute('content') ?? '';

  const createElement = Document.prototype.createElement;
  Document.prototype.createElement = function (this: Document, tagName: string, options?: ElementCreationOptions) {
    const element = createElement.call(this, tagName, options);
    if (nonce && element instanceof HTMLStyleElement) element.setAttribute('nonce', nonce);
    return element;
  } as typeof Document.prototype.createElement;

  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (this: Element, name: string, value: string) {
    if (name.toLowerCase() === 'style' && (this instanceof HTMLElement || this instanceof SVGElement)) {
      this.style.cssText = String(value);
      return;
    }
    setAttribute.call(this, name, value);
  };
}
