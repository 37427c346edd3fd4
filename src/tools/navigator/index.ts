/**
 * The navigator's public surface: the `browser` tool family, its browser
 * check for `lango doctor`, and the parts tests and other wiring reuse.
 */
export { createBrowserTools, createNavigator, navigatorFamily, type BrowserToolsOptions } from './family';
export { BrowserUnavailableError, checkBrowser, type BrowserCheck, type CheckBrowserOptions } from './checkBrowser';
export { createHostPolicy, isPrivateAddress, type HostDecision, type HostPolicy } from './hostPolicy';
export { CHROMIUM_ARGS, createBrowserSessions, type BrowserSession, type BrowserSessions } from './sessions';
export { startGuardProxy, type GuardProxy, type Refusal } from './guardProxy';
