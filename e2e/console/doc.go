// Package console holds the operator console's browser tests: the whole
// suite runs in-process (e2e/stack) and a real headless Chromium, driven
// over the DevTools protocol (chromedp), uses the console the gateway
// serves at /console/.
//
// Locally the tests skip, saying so, when no Chromium is installed; in CI
// (GROUNDCREW_CI=1) a missing browser fails them. `make screenshots` runs
// TestConsoleScreenshots, which writes docs/console/*.png.
package console
