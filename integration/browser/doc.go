// Package browser runs one long-lived headless Chromium (Debian's) and
// drives it over the DevTools protocol on a pipe (--remote-debugging-pipe):
// load a page and read its DOM as Blink serialized it, take a screenshot
// of the page as loaded. One browser serves every load of a test, so the
// cost of starting Chromium, large under the lab VM's emulated CPU, is paid
// once instead of once per look at the page.
//
// It owns the Chromium process it starts, its profile directory and
// nothing else; it needs no network port (the protocol runs on two pipes).
package browser
