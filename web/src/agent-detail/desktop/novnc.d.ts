// The part of noVNC's RFB class (core/rfb.js, docs/API.md of 1.7) the console uses: the package ships
// no types, and a hand-written declaration of what we call keeps a misspelt option a type error.
declare module '@novnc/novnc' {
  export interface RfbCredentials {
    username?: string;
    password?: string;
    target?: string;
  }

  export interface RfbEventMap {
    connect: CustomEvent<Record<string, never>>;
    disconnect: CustomEvent<{ clean: boolean }>;
    credentialsrequired: CustomEvent<{ types: Array<keyof RfbCredentials> }>;
    securityfailure: CustomEvent<{ status: number; reason?: string }>;
    clipboard: CustomEvent<{ text: string }>;
    desktopname: CustomEvent<{ name: string }>;
    capabilities: CustomEvent<{ capabilities: { power: boolean } }>;
  }

  export default class RFB {
    constructor(target: HTMLElement, urlOrChannel: string | WebSocket, options?: { shared?: boolean; credentials?: RfbCredentials; wsProtocols?: string[] });
    viewOnly: boolean;
    focusOnClick: boolean;
    clipViewport: boolean;
    scaleViewport: boolean;
    resizeSession: boolean;
    showDotCursor: boolean;
    background: string;
    /** 0 (worst) to 9 (best) JPEG quality for the Tight encoding. */
    qualityLevel: number;
    /** 0 (none) to 9 (most) compression. */
    compressionLevel: number;
    readonly capabilities: { power: boolean };
    disconnect(): void;
    sendCredentials(credentials: RfbCredentials): void;
    sendCtrlAltDel(): void;
    focus(options?: FocusOptions): void;
    clipboardPasteFrom(text: string): void;
    addEventListener<K extends keyof RfbEventMap>(type: K, listener: (event: RfbEventMap[K]) => void): void;
    removeEventListener<K extends keyof RfbEventMap>(type: K, listener: (event: RfbEventMap[K]) => void): void;
  }
}
